package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// What ssgen reads of bbolt's on-disk format (bbolt v1, file version 2)
// before letting bbolt map the file. bbolt validates a meta page's
// checksum but silently uses the other one if the newest is bad, and it
// trusts page numbers: a truncated file or a freelist page that is not one
// makes it fault or panic. These checks turn both into a DamageError.
//
// A page starts with a 16-byte header: page id (uint64), flags (uint16),
// element count (uint16), overflow page count (uint32). Pages 0 and 1 are
// the two meta pages, written alternately (transaction id modulo 2); after
// the header each holds: magic (uint32), format version (uint32), page
// size (uint32), flags (uint32), the root bucket (root page uint64,
// sequence uint64), the freelist page (uint64), the high-water page (one
// past the last page in use, uint64), the transaction id (uint64) and an
// FNV-64a checksum (uint64) of the 56 bytes before it. Integers are in the
// machine's byte order, as bbolt writes them.
//
// bbolt's own consistency check (Tx.Check) is not run at start: it walks
// the file in a goroutine of its own, where the assertion panics a damaged
// page causes cannot be recovered, so on exactly the files it is for it
// would end the process instead of reporting. What the start does
// instead: these checks, then the load, which reads every page of the
// keys bucket under recover (bbolt checks each page's header as it reads
// it) and every record's checksum. Not caught: a freelist that lists a
// live page as free (a later write may then overwrite it; the record
// checksums catch that at the next start).
const (
	boltMagic         = 0xED0CDAED
	boltVersion       = 2
	boltPageHeader    = 16
	boltMetaSumOffset = 56 // within the meta, after the page header
	boltMetaEnd       = boltPageHeader + boltMetaSumOffset + 8

	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltMetaPage     = 0x04
	boltFreelistPage = 0x10

	boltNoFreelist = ^uint64(0) // the freelist is not stored

	// bbolt's own search for the second meta page tries page sizes from
	// 1 KiB to 16 MiB; a meta claiming another size is not one.
	boltMinPageSize = 1 << 10
	boltMaxPageSize = 1 << 24
)

// boltMeta is a verified meta page.
type boltMeta struct {
	pageSize uint32
	root     uint64 // first page of the root bucket
	freelist uint64 // boltNoFreelist when not stored
	hwm      uint64 // pages below this are the whole database
	txid     uint64
}

// boltPage is a page header.
type boltPage struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func decodeBoltPage(b []byte) (boltPage, bool) {
	if len(b) < boltPageHeader {
		return boltPage{}, false
	}
	ne := binary.NativeEndian
	return boltPage{id: ne.Uint64(b), flags: ne.Uint16(b[8:]), count: ne.Uint16(b[10:]), overflow: ne.Uint32(b[12:])}, true
}

// decodeBoltMeta verifies and reads meta page id (0 or 1) from the bytes
// of its page.
func decodeBoltMeta(page []byte, id uint64) (boltMeta, error) {
	p, ok := decodeBoltPage(page)
	if !ok || len(page) < boltMetaEnd {
		return boltMeta{}, errors.New("short")
	}
	if p.id != id || p.flags != boltMetaPage {
		return boltMeta{}, fmt.Errorf("page header says page %d, flags %#x", p.id, p.flags)
	}
	ne := binary.NativeEndian
	b := page[boltPageHeader:boltMetaEnd]
	if ne.Uint32(b) != boltMagic {
		return boltMeta{}, errors.New("no bbolt magic number")
	}
	if v := ne.Uint32(b[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt format version %d", v)
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:boltMetaSumOffset])
	if h.Sum64() != ne.Uint64(b[boltMetaSumOffset:]) {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	m := boltMeta{pageSize: ne.Uint32(b[8:]), root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]), hwm: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:])}
	switch {
	case m.pageSize < boltMinPageSize || m.pageSize > boltMaxPageSize || m.pageSize&(m.pageSize-1) != 0:
		return boltMeta{}, fmt.Errorf("page size %d", m.pageSize)
	case m.txid%2 != id:
		return boltMeta{}, fmt.Errorf("transaction %d on meta page %d", m.txid, id)
	case m.root < 2 || m.root >= m.hwm:
		return boltMeta{}, fmt.Errorf("root page %d outside pages 2..%d", m.root, m.hwm)
	case m.freelist != boltNoFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		return boltMeta{}, fmt.Errorf("freelist page %d outside pages 2..%d", m.freelist, m.hwm)
	}
	return m, nil
}

// readBoltMetas reads both meta pages of a file of size bytes. Meta page
// 0 gives the page size; when it is bad, meta page 1 is searched for at
// every page size bbolt could have used.
func readBoltMetas(r io.ReaderAt, size int64) (m0, m1 boltMeta, err0, err1 error) {
	buf := make([]byte, boltMetaEnd)
	read := func(off int64) []byte {
		if off < 0 || off >= size {
			return nil
		}
		n, _ := r.ReadAt(buf, off)
		return buf[:n]
	}
	m0, err0 = decodeBoltMeta(read(0), 0)
	if err0 == nil {
		m1, err1 = decodeBoltMeta(read(int64(m0.pageSize)), 1)
		if err1 == nil && m1.pageSize != m0.pageSize {
			err1 = fmt.Errorf("page size %d, meta page 0 says %d", m1.pageSize, m0.pageSize)
		}
		return m0, m1, err0, err1
	}
	err1 = errors.New("not found at any page size")
	for ps := int64(boltMinPageSize); ps <= boltMaxPageSize && ps < size; ps <<= 1 {
		if m, err := decodeBoltMeta(read(ps), 1); err == nil && int64(m.pageSize) == ps {
			return m0, m, err0, nil
		}
	}
	return m0, m1, err0, err1
}

// checkBoltFile checks a bbolt file of size bytes before bbolt opens it:
// both meta pages valid, the file a whole number of pages holding every
// page the newest transaction uses, and the freelist and root pages
// marked as such. It returns the newest meta page. Reason strings are for
// a DamageError.
func checkBoltFile(r io.ReaderAt, size int64) (boltMeta, error) {
	m0, m1, err0, err1 := readBoltMetas(r, size)
	switch {
	case err0 != nil && err1 != nil:
		return boltMeta{}, fmt.Errorf("neither bbolt meta page is valid (page 0: %v; page 1: %v): not a bbolt file, or its header is destroyed", err0, err1)
	case err0 != nil || err1 != nil:
		bad, good, m, err := 0, 1, m1, err0
		if err1 != nil {
			bad, good, m, err = 1, 0, m0, err1
		}
		return boltMeta{}, fmt.Errorf("bbolt meta page %d is invalid (%v) while meta page %d is valid: the newest committed writes may have been lost (repairing accepts the state of meta page %d, transaction %d)", bad, err, good, good, m.txid)
	}
	newest, hwm := m0, max(m0.hwm, m1.hwm)
	if m1.txid > m0.txid {
		newest = m1
	}
	ps := int64(newest.pageSize)
	if size%ps != 0 {
		return boltMeta{}, fmt.Errorf("file size %d is not a whole number of %d-byte pages (truncated?)", size, ps)
	}
	if hwm > uint64(size/ps) {
		return boltMeta{}, fmt.Errorf("file has %d pages but its transactions use %d (truncated)", size/ps, hwm)
	}
	hdr := make([]byte, boltPageHeader)
	page := func(id uint64, what string, ok func(uint16) bool) error {
		if n, _ := r.ReadAt(hdr, int64(id)*ps); n < len(hdr) {
			return fmt.Errorf("%s page %d unreadable", what, id)
		}
		p, _ := decodeBoltPage(hdr)
		if p.id != id || !ok(p.flags) || id+uint64(p.overflow) >= newest.hwm {
			return fmt.Errorf("%s page %d has a bad header (page %d, flags %#x, overflow %d)", what, id, p.id, p.flags, p.overflow)
		}
		return nil
	}
	if newest.freelist != boltNoFreelist {
		if err := page(newest.freelist, "freelist", func(f uint16) bool { return f == boltFreelistPage }); err != nil {
			return boltMeta{}, err
		}
	}
	if err := page(newest.root, "root bucket", func(f uint16) bool { return f == boltBranchPage || f == boltLeafPage }); err != nil {
		return boltMeta{}, err
	}
	return newest, nil
}

// checkDataFile runs checkBoltFile on the data file at path, if there is
// one to check, and reports whether the file is new: missing or empty
// (bbolt initialises it), or holding only bbolt's initial transactions
// (meta pages 0 and 1 as bbolt first writes them).
func checkDataFile(path string) (isNew bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if isNotExist(err) {
		return true, nil
	}
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return false, fmt.Errorf("%w: %s is a symbolic link: the server never follows links in its data directory; put the file itself there", ErrStore, path)
		}
		return false, fmt.Errorf("%w: open %s: %v", ErrStore, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrStore, path, err)
	}
	if fi.Size() == 0 {
		return true, nil
	}
	m, err := checkBoltFile(f, fi.Size())
	if err != nil {
		return false, &DamageError{Path: path, Reason: err.Error()}
	}
	return m.txid <= 1, nil
}
