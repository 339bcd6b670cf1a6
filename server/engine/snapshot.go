package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// Item is one key of a Snapshot.
type Item struct {
	Key   string
	Value []byte
	// Version is the key's version. Export always sets it; on Import a
	// zero Version means the import's own version (a fresh tick).
	Version hlc.HLC
	// Fence is the key's fencing token, zero when it is not fenced.
	Fence hlc.HLC
	// TTL is the time the key has left to live, zero when it never
	// expires. It is relative, not a deadline: an imported key expires TTL
	// after the import, however long ago the snapshot was taken.
	TTL time.Duration
	// Persist tells that the key is kept durable (its latest SET carried
	// aio-persistence, or Config.PersistAll). Import keeps it durable when
	// the engine has Config.Journal.
	Persist bool
}

// Snapshot is the whole store at one instant: what Export takes and
// Import loads.
type Snapshot struct {
	// Taken is Config.Now when the snapshot was taken (informational;
	// Import does not read it).
	Taken time.Time
	// Clock is the engine clock's latest value when the snapshot was
	// taken: every version and response timestamp handed out until then is
	// at or below it. Import moves its clock past it (and past every
	// version and fencing token of Items), so versions assigned afterwards
	// sort after everything the snapshot's store handed out. Zero: none.
	Clock hlc.HLC
	// Items are the keys, in byte-wise order when taken by Export. Their
	// values are shared with the engine (Export) or taken over by it
	// (Import): never modify them.
	Items []Item
}

// ImportMode says what Import does with the keys already stored.
type ImportMode uint8

const (
	// ImportEmpty refuses (ErrNotEmpty) unless the store holds no key.
	ImportEmpty ImportMode = iota
	// ImportMerge stores the snapshot's keys over the store's, replacing
	// those of the same name and keeping the others.
	ImportMerge
	// ImportReplace makes the store exactly the snapshot: keys the
	// snapshot does not hold are deleted.
	ImportReplace
)

// String is the mode's name, as the CLI and the HTTP API spell it.
func (m ImportMode) String() string {
	switch m {
	case ImportEmpty:
		return "empty"
	case ImportMerge:
		return "merge"
	case ImportReplace:
		return "replace"
	}
	return "ImportMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseImportMode reads a mode's name (see ImportMode.String).
func ParseImportMode(s string) (ImportMode, error) {
	for _, m := range []ImportMode{ImportEmpty, ImportMerge, ImportReplace} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("import mode %q: want empty, merge or replace", s)
}

// ImportOptions configure Import.
type ImportOptions struct {
	Mode ImportMode
	// Writable, when set, is the caller's write access: a snapshot with a
	// key it refuses is refused (ErrNotAuthorized), and so is ImportReplace
	// when it refuses a key that would be deleted.
	Writable func(key []byte) bool
	// Readable, when set, is the caller's read access: a refusal names a
	// stored key only when Readable accepts it (a key the caller may not
	// read is not named, not even in an error).
	Readable func(key []byte) bool
}

// ImportResult counts what an Import changed.
type ImportResult struct {
	Stored  int // keys written from the snapshot
	Deleted int // keys ImportReplace deleted
}

// ErrNotEmpty refuses an ImportEmpty into a store that holds keys.
var ErrNotEmpty = errors.New("the store is not empty (import with mode merge or replace to load into it)")

// ItemError reports the item of a snapshot that makes Import refuse it.
// Err says what is wrong; it wraps ErrQuotaExceeded for an item beyond
// the limits, ErrKeyLengthZero for an empty key, ErrNotAuthorized for a
// key the caller may not write.
type ItemError struct {
	Index int    // the item's position in Snapshot.Items (the file's keys[Index])
	Key   string // the item's key, as far as it is known
	Err   error
}

func (e *ItemError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("keys[%d]: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("keys[%d] (key %s): %v", e.Index, DisplayKey([]byte(e.Key)), e.Err)
}

func (e *ItemError) Unwrap() error { return e.Err }

// DisplayKey shows a key for people: quoted when it is printable text,
// else "base64:" and its standard base64 (as a snapshot file spells a
// binary key). Long keys are cut after 200 bytes, with their length.
func DisplayKey(k []byte) string {
	const show = 200
	suffix := ""
	if len(k) > show {
		suffix = fmt.Sprintf("... (%d bytes)", len(k))
		cut := k[:show]
		// Do not cut a character of a text key in two.
		for i := 1; i < utf8.UTFMax && !utf8.Valid(cut); i++ {
			cut = k[:show-i]
		}
		if utf8.Valid(cut) {
			k = cut
		} else {
			k = k[:show]
		}
	}
	if IsText(k) {
		return strconv.Quote(string(k)) + suffix
	}
	return "base64:" + base64.StdEncoding.EncodeToString(k) + suffix
}

// IsText reports whether b reads as text: valid UTF-8 without control
// characters other than tab, newline and carriage return.
func IsText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 || unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
		b = b[n:]
	}
	return true
}

// Export takes a snapshot of the store: every live key (keys due to
// expire are expired first) with its value, version, fencing token, time
// left to live and durability, and the clock. visible, when set, limits it
// to the keys it accepts. It holds the engine's lock while it copies the
// entries (values are shared, not copied): requests wait about 11 ms per
// 100,000 keys (BenchmarkExport100k on a 2-core VM; one SCAN page, 45 µs).
func (e *Engine) Export(visible func(key []byte) bool) Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.reap(now)
	s := Snapshot{Taken: now, Clock: e.clock.Last()}
	n := len(e.keys)
	if visible != nil {
		n = 0
	}
	s.Items = make([]Item, 0, n)
	e.order.seek("", func(ent *entry) bool {
		if visible != nil && !visible([]byte(ent.key)) {
			return true
		}
		it := Item{Key: ent.key, Value: ent.value, Version: ent.version, Fence: ent.fenceToken(), Persist: ent.durable()}
		if ent.hasTTL() {
			it.TTL = ent.meta.ttl.deadline.Sub(now)
		}
		s.Items = append(s.Items, it)
		return true
	})
	return s
}

// Import loads a snapshot, all or nothing: it first checks every item and
// the result against the engine's limits, and refuses the snapshot,
// changing nothing, with the first problem found:
//
//   - an *ItemError naming the item: an empty key, a key or value beyond
//     MaxKeyBytes or MaxValueBytes, a key that appears twice, a negative
//     TTL, a version or fencing token further ahead of Config.Now than the
//     accept window of request stamps (clients would refuse the versions
//     handed out after it; see DriftMargin), a key Writable refuses;
//   - ErrNotEmpty for ImportEmpty into a store with keys;
//   - an error wrapping ErrQuotaExceeded when the store would exceed
//     MaxKeys or MaxBytes;
//   - ErrPersistence when the durable keys could not be written.
//
// Then it applies the snapshot under the engine's lock, as one change:
// the clock moves past Snapshot.Clock and every item's version and token;
// each key gets its value, version (or, when zero, the import's own), fencing
// token, deadline now+TTL and durability; ImportReplace deletes the other
// keys. Durable keys are written (and durable keys deleted or made
// volatile are removed) as one Config.Journal entry, and Import returns
// once it is durable; if it cannot be made so, the whole import is undone
// and Import returns ErrPersistence. Watchers of a key that changed are notified, NOTIFY SET or
// NOTIFY DELETE, stamped with the import's own version, a fresh tick after
// everything the clock has handed out: no client discards it as older than
// what it has seen, while GET returns the key's version from the snapshot.
// Quotas apply to the result; KEYNOTIFY registrations are untouched.
func (e *Engine) Import(s Snapshot, opts ImportOptions) (ImportResult, error) {
	in, err := e.checkItems(s.Items, opts.Writable)
	if err != nil {
		return ImportResult{}, err
	}
	res, wait, err := e.importLocked(s, opts, in)
	if err == nil && wait != 0 && e.journal.Wait(wait) != nil {
		return ImportResult{}, ErrPersistence
	}
	return res, err
}

// importLocked is Import after checkItems, under the lock, up to the wait
// for the journal.
func (e *Engine) importLocked(s Snapshot, opts ImportOptions, in map[string]int) (ImportResult, uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.reap(now)
	if opts.Mode == ImportEmpty && len(e.keys) > 0 {
		return ImportResult{}, 0, ErrNotEmpty
	}
	top, err := e.checkStamps(s, now)
	if err != nil {
		return ImportResult{}, 0, err
	}
	var gone []*entry // ImportReplace: stored keys the snapshot lacks, in key order
	var denied *entry
	if opts.Mode == ImportReplace {
		e.order.seek("", func(ent *entry) bool {
			if _, ok := in[ent.key]; ok {
				return true
			}
			if opts.Writable != nil && !opts.Writable([]byte(ent.key)) {
				denied = ent
				return false
			}
			gone = append(gone, ent)
			return true
		})
	}
	if denied != nil {
		if opts.Readable != nil && !opts.Readable([]byte(denied.key)) {
			return ImportResult{}, 0, fmt.Errorf("replace would delete a key this caller may not read or write: %w", ErrNotAuthorized)
		}
		return ImportResult{}, 0, fmt.Errorf("replace would delete key %s: %w", DisplayKey([]byte(denied.key)), ErrNotAuthorized)
	}
	if err := e.checkQuotas(s.Items, gone); err != nil {
		return ImportResult{}, 0, err
	}

	e.passClock(top)
	version := e.tick(nil)
	// The whole import waits for its journal entry (and for any key's
	// pending change it overwrites): undone together if it fails.
	for _, ent := range gone {
		e.cur = max(e.cur, e.pending[ent.key])
	}
	for _, it := range s.Items {
		e.cur = max(e.cur, e.pending[it.Key])
	}
	defer func() { e.cur = 0 }()
	e.persistImport(s.Items, gone, version, now)
	for _, ent := range gone {
		e.remove(ent, version)
	}
	for _, it := range s.Items {
		v := it.Version
		if v.IsZero() {
			v = version
		}
		value := it.Value
		if value == nil {
			value = []byte{}
		}
		e.place(it.Key, value, v, it.Fence, now.Add(it.TTL), it.TTL > 0, e.wantDurable(it.Persist))
		e.notifySet(it.Key, version, value)
	}
	return ImportResult{Stored: len(s.Items), Deleted: len(gone)}, e.cur, nil
}

// checkItems runs the checks that need no lock: each item on its own,
// and duplicate keys. It returns the items' positions by key.
func (e *Engine) checkItems(items []Item, writable func([]byte) bool) (map[string]int, error) {
	seen := make(map[string]int, len(items))
	for i, it := range items {
		fail := func(err error) (map[string]int, error) { return nil, &ItemError{Index: i, Key: it.Key, Err: err} }
		switch {
		case it.Key == "":
			return fail(ErrKeyLengthZero)
		case e.lim.key > 0 && len(it.Key) > e.lim.key:
			return fail(fmt.Errorf("the key is %d bytes, over the server's limit of %d: %w", len(it.Key), e.lim.key, ErrQuotaExceeded))
		case !e.lim.keptKeyFits(len(it.Key), e.wantDurable(it.Persist)):
			return fail(fmt.Errorf("the key is %d bytes, over the %d a kept key may have: %w", len(it.Key), e.lim.keptKey, ErrQuotaExceeded))
		case e.lim.value > 0 && len(it.Value) > e.lim.value:
			return fail(fmt.Errorf("the value is %d bytes, over the server's limit of %d: %w", len(it.Value), e.lim.value, ErrQuotaExceeded))
		case it.TTL < 0:
			return fail(fmt.Errorf("negative ttl %v", it.TTL))
		case writable != nil && !writable([]byte(it.Key)):
			return fail(ErrNotAuthorized)
		}
		if j, ok := seen[it.Key]; ok {
			return fail(fmt.Errorf("the same key as keys[%d]", j))
		}
		seen[it.Key] = i
	}
	return seen, nil
}

// checkStamps refuses versions, fencing tokens and a clock beyond the
// accept window, and returns the highest of them.
func (e *Engine) checkStamps(s Snapshot, now time.Time) (hlc.HLC, error) {
	limit := uint64(max(now.UnixMilli(), 0)) + uint64(e.accept.Milliseconds())
	ahead := func(what string, h hlc.HLC) error {
		if h.Wall <= limit {
			return nil
		}
		d := time.Duration(h.Wall-uint64(max(now.UnixMilli(), 0))) * time.Millisecond
		return fmt.Errorf("%s %s is %v ahead of the server's clock (at most %v is accepted: clients would refuse the versions handed out after it; was the snapshot taken on a machine whose clock is ahead?)",
			what, h, d, e.accept)
	}
	top := s.Clock
	if err := ahead("the snapshot clock", s.Clock); err != nil {
		return top, err
	}
	for i, it := range s.Items {
		for _, st := range []struct {
			what string
			h    hlc.HLC
		}{{"version", it.Version}, {"fencing token", it.Fence}} {
			if err := ahead(st.what, st.h); err != nil {
				return top, &ItemError{Index: i, Key: it.Key, Err: err}
			}
			if st.h.Compare(top) > 0 {
				top = st.h
			}
		}
	}
	return top, nil
}

// checkQuotas refuses an import whose result would exceed MaxKeys or
// MaxBytes; gone are the keys it deletes.
func (e *Engine) checkQuotas(items []Item, gone []*entry) error {
	if e.maxKeys <= 0 && e.maxBytes <= 0 {
		return nil
	}
	keys, size := len(e.keys)-len(gone), e.bytes
	for _, ent := range gone {
		size -= ent.size()
	}
	for _, it := range items {
		if old := e.keys[it.Key]; old != nil {
			size -= old.size()
		} else {
			keys++
		}
		size += int64(len(it.Key) + len(it.Value))
	}
	if e.maxKeys > 0 && keys > e.maxKeys {
		return fmt.Errorf("the store would hold %d keys, over the server's quota of %d: %w", keys, e.maxKeys, ErrQuotaExceeded)
	}
	if e.maxBytes > 0 && size > e.maxBytes {
		return fmt.Errorf("the store would hold %d bytes of keys and values, over the server's quota of %d: %w", size, e.maxBytes, ErrQuotaExceeded)
	}
	return nil
}

// persistImport hands the journal the durable side of an import as one
// entry (the import then waits for it): a put per item to keep, a delete
// per durable key deleted or made volatile.
func (e *Engine) persistImport(items []Item, gone []*entry, version hlc.HLC, now time.Time) {
	if e.journal == nil {
		return
	}
	var changes []Change
	for _, ent := range gone {
		if ent.durable() {
			changes = append(changes, Change{Record: Record{Key: ent.key, Version: version}, Delete: true})
		}
	}
	for _, it := range items {
		c := Change{Record: Record{Key: it.Key, Version: it.Version}}
		if c.Version.IsZero() {
			c.Version = version
		}
		if e.wantDurable(it.Persist) {
			c.Value, c.Fence = it.Value, it.Fence
			if c.Value == nil {
				c.Value = []byte{}
			}
			if it.TTL > 0 {
				c.Deadline = now.Add(it.TTL)
			}
		} else if old := e.keys[it.Key]; old != nil && old.durable() {
			c.Delete = true
		} else {
			continue
		}
		changes = append(changes, c)
	}
	if len(changes) == 0 {
		return
	}
	e.seq++
	e.journal.Append(e.seq, changes)
	e.cur = e.seq
}
