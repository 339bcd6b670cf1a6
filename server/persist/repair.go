package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// Repair (Options.Repair) never trusts bbolt with a damaged file: it reads
// the file's pages itself, from the newest valid meta page down the
// B+trees of the meta and keys buckets, so that a bad page loses only the
// keys below it, a page past the end of a truncated file is skipped, and
// nothing panics. Only pages reachable from the meta page are read: a
// freed page's stale copy of a record is never brought back.

// salvageMaxDepth bounds the walk of a damaged file, whose page numbers
// may form absurd depths (loops are caught by remembering visited pages).
const salvageMaxDepth = 64

// salvaged is what a walk of a damaged file recovered.
type salvaged struct {
	format []byte
	floor  hlc.HLC
	recs   []engine.Record
	// skipped describes, in one line each, every key or page left out.
	skipped []string
	// pages are the pages the walk reached (the live pages of a sound file).
	pages map[uint64]bool
	// logMeta are the write-ahead log's meta values (format 3), as stored.
	logMeta map[string][]byte
}

// pageReader reads whole pages of a damaged file, refusing page numbers
// outside the pages the meta page declared or the file holds.
type pageReader struct {
	r       io.ReaderAt
	ps      int64
	pages   uint64 // readable pages: min(meta high-water, file pages)
	visited map[uint64]bool
}

// page returns page id with its overflow pages, checking its header.
func (pr *pageReader) page(id uint64) ([]byte, error) {
	if id < 2 || id >= pr.pages {
		return nil, fmt.Errorf("page %d: outside the file's %d pages", id, pr.pages)
	}
	if pr.visited[id] {
		return nil, fmt.Errorf("page %d: reached twice (a loop)", id)
	}
	pr.visited[id] = true
	hdr := make([]byte, boltPageHeader)
	if _, err := pr.r.ReadAt(hdr, int64(id)*pr.ps); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	p, _ := decodeBoltPage(hdr)
	if p.id != id || (p.flags != boltBranchPage && p.flags != boltLeafPage) {
		return nil, fmt.Errorf("page %d: bad header (says page %d, flags %#x)", id, p.id, p.flags)
	}
	if uint64(p.overflow) >= pr.pages-id {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the end", id, p.overflow)
	}
	b := make([]byte, (int64(p.overflow)+1)*pr.ps)
	if _, err := pr.r.ReadAt(b, int64(id)*pr.ps); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	return b, nil
}

// walk visits every leaf entry of the B+tree in page b (a page read by
// pr.page, or a bucket stored inline in its parent's value), calling
// visit with the entry's key, value and whether it is a nested bucket.
// Damage below a branch is reported to skip and the walk goes on.
func (pr *pageReader) walk(b []byte, depth int, visit func(k, v []byte, bucket bool), skip func(string)) {
	p, ok := decodeBoltPage(b)
	if !ok {
		skip("a page shorter than its header")
		return
	}
	ne := binary.NativeEndian
	if int64(p.count)*16 > int64(len(b)-boltPageHeader) {
		skip(fmt.Sprintf("page %d: %d elements do not fit", p.id, p.count))
		return
	}
	for i := range int(p.count) {
		at := boltPageHeader + i*16
		e := b[at : at+16]
		switch p.flags {
		case boltLeafPage:
			flags, pos, ks, vs := ne.Uint32(e), ne.Uint32(e[4:]), ne.Uint32(e[8:]), ne.Uint32(e[12:])
			start := uint64(at) + uint64(pos)
			if end := start + uint64(ks) + uint64(vs); end > uint64(len(b)) {
				skip(fmt.Sprintf("page %d: element %d runs past the page", p.id, i))
				continue
			}
			k := b[start : start+uint64(ks)]
			visit(k, b[start+uint64(ks):start+uint64(ks)+uint64(vs)], flags&1 != 0)
		case boltBranchPage:
			child := ne.Uint64(e[8:]) // after the key's position and size
			if depth >= salvageMaxDepth {
				skip(fmt.Sprintf("page %d: tree deeper than %d", p.id, salvageMaxDepth))
				return
			}
			cb, err := pr.page(child)
			if err != nil {
				skip(err.Error() + " (its keys are lost)")
				continue
			}
			pr.walk(cb, depth+1, visit, skip)
		default:
			skip(fmt.Sprintf("page %d: flags %#x", p.id, p.flags))
			return
		}
	}
}

// bucket walks the nested bucket whose value (a bucket header, and the
// bucket itself when it is stored inline) is v.
func (pr *pageReader) bucket(v []byte, visit func(k, v []byte, bucket bool), skip func(string)) {
	if len(v) < 16 {
		skip("a bucket header shorter than 16 bytes")
		return
	}
	root := binary.NativeEndian.Uint64(v)
	if root == 0 { // inline: the bucket's only page follows the header
		pr.walk(v[16:], 1, visit, skip)
		return
	}
	b, err := pr.page(root)
	if err != nil {
		skip(err.Error() + " (its keys are lost)")
		return
	}
	pr.walk(b, 1, visit, skip)
}

// salvage reads what it can of a damaged bbolt file of size bytes. It
// never fails: what it cannot read is listed in skipped.
func salvage(r io.ReaderAt, size int64) salvaged {
	var out salvaged
	skip := func(s string) { out.skipped = append(out.skipped, s) }
	m0, m1, err0, err1 := readBoltMetas(r, size)
	var m boltMeta
	switch {
	case err0 == nil && (err1 != nil || m0.txid > m1.txid):
		m = m0
	case err1 == nil:
		m = m1
	default:
		skip(fmt.Sprintf("no valid meta page (page 0: %v; page 1: %v): nothing is readable", err0, err1))
		return out
	}
	pr := &pageReader{r: r, ps: int64(m.pageSize), pages: min(m.hwm, uint64(size/int64(m.pageSize))), visited: map[uint64]bool{}}
	out.pages = pr.visited
	if pr.pages < m.hwm {
		skip(fmt.Sprintf("pages %d..%d are past the end of the file (truncated)", pr.pages, m.hwm-1))
	}
	rootPage, err := pr.page(m.root)
	if err != nil {
		skip("root bucket " + err.Error() + ": nothing is readable")
		return out
	}
	var metaB, keysB []byte
	pr.walk(rootPage, 0, func(k, v []byte, bucket bool) {
		switch {
		case !bucket:
		case bytes.Equal(k, bucketMeta):
			metaB = bytes.Clone(v)
		case bytes.Equal(k, bucketKeys):
			keysB = bytes.Clone(v)
		}
	}, skip)
	var clock []byte
	if metaB == nil {
		skip("the meta bucket is lost (format and clock floor unknown)")
	} else {
		pr.bucket(metaB, func(k, v []byte, bucket bool) {
			switch {
			case bucket:
			case bytes.Equal(k, metaFormat):
				out.format = bytes.Clone(v)
			case bytes.Equal(k, metaClock):
				clock = bytes.Clone(v)
			case isLogMetaKey(k):
				if out.logMeta == nil {
					out.logMeta = map[string][]byte{}
				}
				out.logMeta[string(k)] = bytes.Clone(v)
			}
		}, skip)
	}
	// A file whose format is unknown is checked as the current format: a
	// record that passes a CRC-32C by chance is vanishingly rare.
	verify := !bytes.Equal(out.format, formatV1)
	if f, err := decodeFloor(clock, verify); err != nil {
		skip("clock floor " + err.Error())
	} else {
		out.floor = f
	}
	if keysB == nil {
		skip("the keys bucket is lost: no key is readable")
		return out
	}
	pr.bucket(keysB, func(k, v []byte, bucket bool) {
		if len(k) == 0 {
			skip("an entry with an empty key")
			return
		}
		if len(k) > MaxKeyBytes { // a damaged page's; the new file could not hold it
			skip(errKeyTooLong(string(k)).Error())
			return
		}
		if bucket {
			skip(fmt.Sprintf("key %s: a bucket where a record belongs", displayKey(k)))
			return
		}
		rec, err := decodeRecord(k, v, verify)
		if err != nil {
			skip(fmt.Sprintf("key %s: %v", displayKey(k), err))
			return
		}
		out.recs = append(out.recs, rec)
	}, skip)
	return out
}

// repairStore salvages the damaged data file at path into a new one
// written beside it, keeps the damaged file as path.damaged-<UTC time>,
// and puts the new file in its place. At every instant path is either the
// damaged file or the complete new one, and the damaged bytes are never
// deleted.
func repairStore(path string, o Options) error {
	fail := func(err error) error { return fmt.Errorf("%w: repair %s: %v", ErrStore, path, err) }
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fail(err)
	}
	got := salvage(f, fi.Size())
	f.Close()
	if got.format != nil && !bytes.Equal(got.format, formatValue) && !bytes.Equal(got.format, formatV2) && !bytes.Equal(got.format, formatV1) {
		return fail(fmt.Errorf("format %q is not one this build writes; refusing to rewrite it", got.format))
	}
	for _, s := range got.skipped {
		o.Log.Error("repair: left out", "file", path, "what", s)
	}

	tmp := path + ".repair"
	if err := os.Remove(tmp); err != nil && !isNotExist(err) {
		return fail(err)
	}
	if err := writeSalvaged(tmp, got); err != nil {
		_ = os.Remove(tmp)
		return fail(err)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	aside := asideName(path, now())
	// A hard link keeps the damaged bytes under the new name while path
	// still names them; the rename then swaps the new file in atomically.
	// Where links are not supported, two renames leave a moment with no
	// file at path (a crash then would start empty; both files remain).
	if err := os.Link(path, aside); err != nil {
		if err := os.Rename(path, aside); err != nil {
			_ = os.Remove(tmp)
			return fail(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("%v (the salvaged file is %s, the damaged one %s)", err, tmp, aside))
	}
	syncDir(filepath.Dir(path))
	o.Log.Error("data file repaired: the damaged file is kept aside; keys left out are logged above",
		"file", path, "damaged_copy", aside, "keys_kept", len(got.recs), "left_out", len(got.skipped))
	return nil
}

// asideName is path.damaged-<UTC time>, with a counter if that exists.
func asideName(path string, t time.Time) string {
	base := path + ".damaged-" + t.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); isNotExist(err) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// writeSalvaged writes a new data file in the current format at path holding recs and
// the clock floor (raised past every salvaged version).
func writeSalvaged(path string, got salvaged) error {
	// A new file (repairStore removed any by that name): never one a link
	// points to.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
		return os.OpenFile(name, flag|os.O_EXCL|noFollow, mode)
	}})
	if err != nil {
		return err
	}
	floor := got.floor
	for _, r := range got.recs {
		if r.Version.Compare(floor) > 0 {
			floor = r.Version
		}
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		keys, err := tx.CreateBucket(bucketKeys)
		if err != nil {
			return err
		}
		if err := putSalvagedLogMeta(meta, got.logMeta); err != nil {
			return err
		}
		return writeAll(meta, keys, got.recs, floor)
	})
	return errors.Join(err, db.Close())
}

// syncDir makes a rename in dir durable, where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
