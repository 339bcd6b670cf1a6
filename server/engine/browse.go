package engine

import (
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// Bounds of one Browse call's work under the engine's lock, the same
// order as SCAN's: a page is cheap however many keys the store holds.
const (
	// BrowseMaxLimit is the most items one page may ask for.
	BrowseMaxLimit = 1000
	// browseExamine is the most keys one call examines (folders skipped
	// in one seek count as one).
	browseExamine = 4096
	// browseSteps is the matching budget of one call in glob cost units
	// (as scanSteps).
	browseSteps = 1 << 20
)

// BrowseOptions select one page of keys for an inspector (the web
// console). Pages are in byte-wise key order; continue with From set to
// the previous page's Next.
type BrowseOptions struct {
	// Prefix restricts the page to keys starting with it.
	Prefix string
	// Folders lists a key with a '/' after Prefix once, as the folder
	// Prefix+level+"/" (a tree view, one '/' level at a time). Ignored
	// with Pattern.
	Folders bool
	// Pattern, when not empty, lists only keys matching this glob
	// (package internal/glob, SCAN's syntax), as a flat list.
	Pattern string
	// Visible, when set, hides the keys it refuses (authorization), and
	// every folder holding none it accepts: the page is then the same as
	// if the hidden keys did not exist.
	Visible func(key []byte) bool
	// From is where the page starts (inclusive): "" for the first page,
	// else the previous page's Next.
	From string
	// Limit is the most items of the page (100 when 0, at most
	// BrowseMaxLimit).
	Limit int
}

// BrowseItem is one key, or one folder, of a Browse page.
type BrowseItem struct {
	Key      string    // the key, or the folder: a prefix ending in '/'
	Folder   bool      // Key is a folder
	Size     int       // value bytes (keys only)
	Version  hlc.HLC   // keys only
	Deadline time.Time // keys only; zero when the key never expires
	Fenced   bool      // keys only: the key has a fencing token
}

// BrowsePage is one page of keys. Next is empty on the last page; a page
// may be short, even empty, while Next is not (the work bound was reached
// before the page filled). With BrowseOptions.Visible, Next is always a
// visible key and Examined counts only visible keys.
type BrowsePage struct {
	Items    []BrowseItem
	Next     string
	Examined int // keys examined for this page (visible ones only, with Visible)
}

// Browse returns one page of the key space as o says. The work under the
// lock is bounded whatever the store holds: a seek per folder, and at
// most a few thousand keys examined (and a matching budget as SCAN's).
// Pattern and Prefix both narrow the walk to the keys starting with the
// longer of the two prefixes.
//
// With Visible, the page is a function of the visible keys alone, so it
// tells nothing of the hidden ones: Next is a visible key (or ""),
// Examined counts visible keys, and the budget that ends a page is spent
// on visible keys only. The hidden keys between visible ones are walked
// past in chunks of browseExamine keys, the lock released between chunks,
// so a page costs time in proportion to the hidden keys it passes but no
// other request waits for more than one chunk.
func (e *Engine) Browse(o BrowseOptions) BrowsePage {
	limit := o.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, BrowseMaxLimit)
	var pat *glob.Pattern
	prefix := o.Prefix
	if o.Pattern != "" {
		pat = glob.Compile(o.Pattern)
		if p := pat.Prefix(); strings.HasPrefix(p, prefix) {
			prefix = p
		} else if !strings.HasPrefix(prefix, p) {
			return BrowsePage{} // no key starts with both
		}
	}
	folders := o.Folders && pat == nil
	from := max(o.From, prefix)

	var (
		page  BrowsePage
		spent int
	)
	for {
		resume, done := e.browseChunk(&o, &page, pat, prefix, folders, limit, from, &spent)
		if done {
			return page
		}
		from = resume // the chunk of hidden keys ended: go on after letting others in
	}
}

// browseChunk walks one chunk of Browse under the lock, from from. It
// returns done when the page is complete (page.Next set or the walk at its
// end), else where to go on: a chunk ends after browseExamine hidden keys.
func (e *Engine) browseChunk(o *BrowseOptions, page *BrowsePage, pat *glob.Pattern, prefix string, folders bool, limit int, from string, spent *int) (resume string, done bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	hidden := 0
	for {
		next, jump := "", ""
		stopped := false
		e.order.seek(from, func(ent *entry) bool {
			k := ent.key
			if !strings.HasPrefix(k, prefix) {
				return false
			}
			if o.Visible != nil && !o.Visible([]byte(k)) {
				if hidden++; hidden >= browseExamine {
					resume, stopped = k+"\x00", true
					return false
				}
				return true
			}
			// A visible key: the page ends here if it is full or its
			// budget is spent, with this key as Next.
			if len(page.Items) == limit {
				next = k
				return false
			}
			cost := 1
			if pat != nil {
				cost = pat.Cost(len(k))
			}
			if page.Examined > 0 && (page.Examined >= browseExamine || *spent+cost > browseSteps) {
				next = k
				return false
			}
			page.Examined++
			*spent += cost
			if pat != nil && !pat.Match(k) {
				return true
			}
			if folders {
				if i := strings.IndexByte(k[len(o.Prefix):], '/'); i >= 0 {
					dir := k[:len(o.Prefix)+i+1]
					page.Items = append(page.Items, BrowseItem{Key: dir, Folder: true})
					jump = after(dir)
					return false
				}
			}
			page.Items = append(page.Items, BrowseItem{
				Key: k, Size: len(ent.value), Version: ent.version,
				Deadline: ent.deadline(), Fenced: ent.fenced(),
			})
			return true
		})
		switch {
		case stopped:
			return resume, false
		case jump != "":
			// A folder was listed: go on after its last possible key.
			from = jump
		default:
			page.Next = next
			return "", true
		}
	}
}

// after returns the least string greater than every string that starts
// with dir (dir ends in '/'): dir with its last byte incremented.
func after(dir string) string {
	b := []byte(dir)
	b[len(b)-1]++
	return string(b)
}
