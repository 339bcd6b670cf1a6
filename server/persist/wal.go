package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// The write-ahead log (the default; not with Options.DirectCommits): each
// group commit is one record appended to a log segment and one fdatasync,
// and the bbolt file is brought up to date later, off the request path, by
// checkpoints (checkpoint.go). A start replays the records the bbolt file does
// not have yet.
//
// A segment is a file LogPrefix + 8 decimal digits (its number) in the
// data directory, created at its full size (segmentSize) and filled with
// zeros before it is used, so that an append changes no file metadata and
// fdatasync writes only the record's pages. It starts with a 64-byte
// header:
//
//	magic "SSGENLOG" | format (uint32) | segment number (uint64) |
//	store id (16 bytes) | CRC-32C of the 36 bytes before it |
//	size made at (uint64) | CRC-32C of that size | zeros
//
// (Segments of builds before the size was recorded have zeros in its
// place, and their size is not checked.) A segment that is not the size it
// was made at was cut short or extended: damage.
//
// then records, each a 16-byte header and a payload:
//
//	payload length (uint32) | CRC-32C (uint32) | sequence number (uint64)
//
// The CRC covers the store id, the sequence number and the payload, so a
// record of another store's log, or of an earlier use of the bytes, does
// not check. Sequence numbers are consecutive across segments. A length
// of 0 ends the segment's records (the zeros not written yet). Integers
// are little-endian. The payload is the group's changes (encodeGroup).
//
// What a start accepts: segments numbered without gaps, each with a valid
// header of this store; records whose checksums match, numbered one after
// the other; and after the last good record of the last segment that has
// any, one record that does not check followed only by zeros (a write a
// crash cut short, never acknowledged). Anything else is damage, refused
// with a DamageError naming the segment.

// LogPrefix starts the name of every write-ahead log segment in a data
// directory.
const LogPrefix = "statestore.log."

const (
	logMagic        = "SSGENLOG"
	logFormat       = 1
	logHeaderSize   = 64
	logHeaderSummed = 8 + 4 + 8 + 16
	logSizeAt       = logHeaderSummed + 4 // the size made at, then its CRC
	recHeaderSize   = 16
)

// segmentSize is the size of a new segment (a record larger than what is
// left in the current one starts a new one, made large enough for it).
// Tests lower it.
var segmentSize int64 = 16 << 20

// segmentPath is the file of segment n in dir.
func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%08d", LogPrefix, n))
}

// logSegments lists the segment numbers in dir, ascending.
func logSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var nums []uint64
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), LogPrefix)
		if !ok || len(rest) != 8 {
			continue // a damaged segment set aside, a temporary file
		}
		n, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	return nums, nil
}

// encodeLogHeader is the header of segment n made at size bytes (0: not
// recorded, as earlier builds wrote it).
func encodeLogHeader(n uint64, id [16]byte, size int64) []byte {
	h := make([]byte, logHeaderSize)
	copy(h, logMagic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], logFormat)
	le.PutUint64(h[12:], n)
	copy(h[20:36], id[:])
	le.PutUint32(h[36:], crc32.Checksum(h[:logHeaderSummed], castagnoli))
	if size > 0 {
		le.PutUint64(h[logSizeAt:], uint64(size))
		le.PutUint32(h[logSizeAt+8:], crc32.Checksum(h[logSizeAt:logSizeAt+8], castagnoli))
	}
	return h
}

// checkLogHeader reads the header of segment data h (the whole file); the
// error is a DamageError's reason.
func checkLogHeader(h []byte, n uint64, id [16]byte) error {
	le := binary.LittleEndian
	switch {
	case len(h) < logHeaderSize:
		return errors.New("shorter than a log header (truncated)")
	case string(h[:8]) != logMagic:
		return errors.New("not a ssgen write-ahead log segment (no SSGENLOG magic)")
	case le.Uint32(h[36:]) != crc32.Checksum(h[:logHeaderSummed], castagnoli):
		return errors.New("log header checksum mismatch")
	case le.Uint32(h[8:]) != logFormat:
		return fmt.Errorf("log format %d (this build reads %d)", le.Uint32(h[8:]), logFormat)
	case le.Uint64(h[12:]) != n:
		return fmt.Errorf("header says segment %d", le.Uint64(h[12:]))
	case !bytes.Equal(h[20:36], id[:]):
		return errors.New("belongs to another data file (store id mismatch): a segment copied from elsewhere, or the data file was replaced")
	case !allZero(h[logSizeAt:logSizeAt+12]) &&
		le.Uint32(h[logSizeAt+8:]) != crc32.Checksum(h[logSizeAt:logSizeAt+8], castagnoli):
		return errors.New("log header checksum mismatch (the size it was made at)")
	case le.Uint64(h[logSizeAt:]) > maxSegmentSize:
		return fmt.Errorf("header says it was made at %d bytes, more than a segment can be", le.Uint64(h[logSizeAt:]))
	}
	return nil
}

// maxSegmentSize bounds a segment: one made for a single record (whose
// length is a uint32) with its header.
const maxSegmentSize = logHeaderSize + recHeaderSize + 1<<32

// checkLogSize compares the size of a segment file whose header h checks
// with the size the header says it was made at.
func checkLogSize(h []byte, size int64) error {
	made := binary.LittleEndian.Uint64(h[logSizeAt:])
	switch {
	case made == 0: // made by a build that did not record its size
	case uint64(size) < made:
		return fmt.Errorf("%d bytes, but it was made at %d: cut short (truncated), and whatever records were in the rest are lost", size, made)
	case uint64(size) > made:
		return fmt.Errorf("%d bytes, but it was made at %d: something was appended to it", size, made)
	}
	return nil
}

// readSegment reads segment file n at path, which must be a regular file
// (a link is not followed): its header first, and only when that checks,
// the rest, up to the size it was made at. size is the file's. The error
// is an I/O error; herr is why the header does not check (data is then
// the header alone).
func readSegment(path string, n uint64, id [16]byte) (data []byte, size int64, herr, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("not a regular file (%v)", fi.Mode().Type()), nil
	}
	size = fi.Size()
	h := make([]byte, min(size, logHeaderSize))
	if _, err := io.ReadFull(f, h); err != nil {
		return nil, 0, nil, err
	}
	if herr := checkLogHeader(h, n, id); herr != nil {
		return h, size, herr, nil
	}
	if size > maxSegmentSize {
		return h, size, fmt.Errorf("%d bytes, more than a segment can be", size), nil
	}
	want := size
	if made := int64(binary.LittleEndian.Uint64(h[logSizeAt:])); made > 0 {
		want = min(size, made)
	}
	data = make([]byte, want)
	copy(data, h)
	if _, err := io.ReadFull(f, data[logHeaderSize:]); err != nil {
		return nil, 0, nil, err
	}
	return data, size, nil, nil
}

func recordCRC(id [16]byte, seq uint64, payload []byte) uint32 {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seq)
	c := crc32.Update(0, castagnoli, id[:])
	c = crc32.Update(c, castagnoli, s[:])
	return crc32.Update(c, castagnoli, payload)
}

// appendLogRecord appends one record to b.
func appendLogRecord(b []byte, id [16]byte, seq uint64, payload []byte) []byte {
	var h [recHeaderSize]byte
	putLogRecordHeader(h[:], id, seq, payload)
	return append(append(b, h[:]...), payload...)
}

// putLogRecordHeader writes the header of the record of payload into h.
func putLogRecordHeader(h []byte, id [16]byte, seq uint64, payload []byte) {
	le := binary.LittleEndian
	le.PutUint32(h[0:], uint32(len(payload)))
	le.PutUint32(h[4:], recordCRC(id, seq, payload))
	le.PutUint64(h[8:], seq)
}

// Group payload: the number of changes (uvarint), then per change a kind
// byte (0 put, 1 delete), the key (uvarint length + bytes) and, for a put,
// the record as the bbolt file stores it (encodeRecord: it has its own
// checksum), for a delete the version's text (which raises the clock
// floor), each with a uvarint length.
const (
	changePut    = 0
	changeDelete = 1
)

func encodeGroup(b []byte, changes []queuedChange) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(changes)))
	for _, q := range changes {
		c := q.Change
		kind := byte(changePut)
		if c.Delete {
			kind = changeDelete
		}
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(len(c.Key)))
		b = append(b, c.Key...)
		// The value's length prefix is reserved at its largest and moved
		// once the value is written in place (no copy of the record).
		at := len(b)
		b = append(b, make([]byte, binary.MaxVarintLen64)...)
		if c.Delete {
			b = c.Version.AppendText(b)
		} else {
			b = appendRecord(b, c.Record)
		}
		var n [binary.MaxVarintLen64]byte
		ln := binary.PutUvarint(n[:], uint64(len(b)-at-binary.MaxVarintLen64))
		copy(b[at:], n[:ln])
		b = append(b[:at+ln], b[at+binary.MaxVarintLen64:]...)
	}
	return b, nil
}

// decodeGroup calls fn with each change of a payload, in order. A put's
// record is verified (checksum, version, fence); the slices are fresh.
func decodeGroup(p []byte, d *recordDecoder, fn func(engine.Change)) error {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return errors.New("bad change count")
	}
	p = p[k:]
	field := func() ([]byte, error) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return nil, errors.New("bad field length")
		}
		f := p[k : k+int(l)]
		p = p[k+int(l):]
		return f, nil
	}
	for range n {
		if len(p) == 0 {
			return errors.New("truncated payload")
		}
		kind := p[0]
		p = p[1:]
		key, err := field()
		if err != nil {
			return err
		}
		v, err := field()
		if err != nil {
			return err
		}
		switch kind {
		case changePut:
			if err := d.decode(key, v, true); err != nil {
				return fmt.Errorf("record of key %s: %v", displayKey(key), err)
			}
			fn(engine.Change{Record: d.record(key)})
		case changeDelete:
			ver, err := hlc.Parse(string(v))
			if err != nil {
				return fmt.Errorf("deletion of key %s: version: %v", displayKey(key), err)
			}
			fn(engine.Change{Record: engine.Record{Key: string(key), Version: ver}, Delete: true})
		default:
			return fmt.Errorf("change kind %d", kind)
		}
	}
	if len(p) != 0 {
		return errors.New("trailing bytes after the changes")
	}
	return nil
}

// logRecord is one record read back, from the segment file path (set by
// readLog).
type logRecord struct {
	seq     uint64
	payload []byte
	path    string
}

// segmentScan is what reading one segment found.
type segmentScan struct {
	recs []logRecord
	end  int64 // offset after the last good record
	// torn: one record after end does not check, followed only by zeros.
	torn bool
	// bad describes the first damage (a DamageError's reason), "" if none.
	bad string
	// skipped, with salvage, describes each stretch left out.
	skipped []string
}

// scanSegment reads the records of segment data b (the whole file). With
// salvage, a record that does not check is skipped and the scan resumes
// at the next offset where a record checks.
func scanSegment(b []byte, id [16]byte, salvage bool) segmentScan {
	var s segmentScan
	le := binary.LittleEndian
	off := int64(logHeaderSize)
	size := int64(len(b))
	// budget bounds the bytes checksummed in all, so that salvaging a
	// crafted segment (every offset claiming a long record) stays linear.
	budget := salvageBudget * size
	checks := func(at int64) (logRecord, int64, bool) {
		if size-at < recHeaderSize {
			return logRecord{}, 0, false
		}
		h := b[at : at+recHeaderSize]
		l := int64(le.Uint32(h))
		if l == 0 || l > size-at-recHeaderSize || l > budget {
			return logRecord{}, 0, false
		}
		budget -= l
		seq := le.Uint64(h[8:])
		p := b[at+recHeaderSize : at+recHeaderSize+l]
		if le.Uint32(h[4:]) != recordCRC(id, seq, p) {
			return logRecord{}, 0, false
		}
		return logRecord{seq: seq, payload: p}, at + recHeaderSize + l, true
	}
	for off < size {
		// Zeros to the end, however few (a record may leave 1 to 3
		// bytes of the segment unused), are where the log ends.
		if allZero(b[off:min(size, off+recHeaderSize)]) && allZero(b[off:]) {
			break
		}
		r, next, ok := checks(off)
		if ok {
			s.recs = append(s.recs, r)
			off = next
			s.end = off
			continue
		}
		if !salvage {
			if allZeroAfterRecord(b, off) {
				s.torn = true
				return s
			}
			s.bad = fmt.Sprintf("the record at offset %d does not check (its checksum or length is wrong), and the bytes after it are not the zeros the log ends with", off)
			return s
		}
		from := off
		for off++; off < size && budget > 0; off++ {
			if _, _, ok := checks(off); ok {
				break
			}
		}
		if budget <= 0 {
			s.skipped = append(s.skipped, fmt.Sprintf("bytes %d to the end not searched for records: the search would cost more than %d times the segment's size", from, salvageBudget))
			break
		}
		if !allZero(b[from:off]) {
			s.skipped = append(s.skipped, fmt.Sprintf("bytes %d to %d do not hold a record that checks", from, off))
		}
	}
	if s.end == 0 {
		s.end = logHeaderSize
	}
	return s
}

// salvageBudget times a segment's size is what scanSegment checksums at
// most (a search through damage is the costly part).
const salvageBudget = 64

// allZeroAfterRecord: everything from the end the record at off claims
// (or, when its length is impossible, from its header's end) is zero.
func allZeroAfterRecord(b []byte, off int64) bool {
	size := int64(len(b))
	end := min(size, off+recHeaderSize)
	if size-off >= 4 {
		if l := int64(binary.LittleEndian.Uint32(b[off:])); l <= size-off-recHeaderSize {
			end = off + recHeaderSize + l
		}
	}
	return allZero(b[end:])
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// logWriter appends group records to the current segment. Only the group
// commit's writer calls append; the checkpointer calls retire.
type logWriter struct {
	dir string
	id  [16]byte
	f   *os.File // the current segment
	num uint64   // its number
	off int64    // where the next record goes
	cap int64    // its size
	// dirty: a failed append may have left bytes up to here, which the
	// next append overwrites with zeros beyond its own record.
	dirty int64
	seq   uint64 // the last sequence number written
	buf   []byte
	watch *segmentWatch
	// syncFault, set by tests, fails an append after its record was
	// written and synced, as a failed fdatasync would leave it.
	syncFault func() error

	// next is a segment prepared in the background (nil while being
	// made); nextErr its failure.
	mu      sync.Mutex
	next    *os.File
	nextNum uint64
	nextErr error
	making  bool
	// lastSeq of each closed segment still on disk, for retire.
	closed map[uint64]uint64
	cur    uint64 // num, for firstNeeded
}

// createSegment writes segment n in full (header, zeros) and syncs it and
// the directory. size is at least segmentSize.
func createSegment(dir string, n uint64, id [16]byte, size int64) (*os.File, error) {
	path := segmentPath(dir, n)
	tmp := path + ".tmp"
	// A new file: a leftover of a crash (or a name someone planted) is
	// removed first, never followed or reused.
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, err
	}
	zeros := make([]byte, 1<<20)
	copy(zeros, encodeLogHeader(n, id, size))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		chunk := zeros[:min(int64(len(zeros)), size-off)]
		if _, err := f.WriteAt(chunk, off); err != nil {
			return fail(err)
		}
		if off == 0 {
			clear(zeros[:logHeaderSize])
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := syncDirErr(dir); err != nil {
		return fail(err)
	}
	return f, nil
}

// syncDirErr makes a new name in dir durable.
func syncDirErr(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// newLogWriter starts segment num (its predecessors are all applied)
// after sequence number seq.
func newLogWriter(dir string, id [16]byte, num, seq uint64) (*logWriter, error) {
	f, err := createSegment(dir, num, id, segmentSize)
	if err != nil {
		return nil, err
	}
	w := &logWriter{dir: dir, id: id, f: f, num: num, cur: num, off: logHeaderSize, cap: segmentSize, seq: seq, closed: map[uint64]uint64{}}
	if w.watch, err = newSegmentWatch(f, segmentPath(dir, num)); err != nil {
		_ = f.Close()
		return nil, err
	}
	w.prepareNext()
	return w, nil
}

// prepareNext makes the next segment in the background. Under no lock.
func (w *logWriter) prepareNext() {
	w.mu.Lock()
	if w.making || w.next != nil {
		w.mu.Unlock()
		return
	}
	w.making, w.nextErr = true, nil
	n := w.num + 1
	w.mu.Unlock()
	go func() {
		f, err := createSegment(w.dir, n, w.id, segmentSize)
		w.mu.Lock()
		w.making = false
		w.next, w.nextNum, w.nextErr = f, n, err
		w.mu.Unlock()
	}()
}

// roll switches to the next segment, big enough for need bytes.
func (w *logWriter) roll(need int64) error {
	w.mu.Lock()
	f, n, err := w.next, w.nextNum, w.nextErr
	making := w.making
	w.next = nil
	w.mu.Unlock()
	size := max(segmentSize, need+logHeaderSize)
	switch {
	case f != nil && size > segmentSize:
		// Too small for this record: replaced by a larger one.
		_ = f.Close()
		f = nil
	case f == nil && making:
		// Still being made: wait for it rather than make two.
		for {
			w.mu.Lock()
			if !w.making {
				f, n, err = w.next, w.nextNum, w.nextErr
				w.next = nil
				w.mu.Unlock()
				break
			}
			w.mu.Unlock()
			runtime.Gosched()
		}
		if f != nil && size > segmentSize {
			_ = f.Close()
			f = nil
		}
	}
	if f == nil || err != nil {
		if f != nil {
			_ = f.Close()
		}
		if f, err = createSegment(w.dir, w.num+1, w.id, size); err != nil {
			return err
		}
		n = w.num + 1
	}
	watch, err := newSegmentWatch(f, segmentPath(w.dir, n))
	if err != nil {
		_ = f.Close()
		return err
	}
	if w.dirty > w.off {
		// A failed append's bytes would otherwise stay at the end of
		// this segment, with the sequence number the next record takes
		// in the new one.
		if err := w.zero(w.off, w.dirty); err != nil {
			_ = f.Close()
			return err
		}
	}
	w.mu.Lock()
	w.closed[w.num] = w.seq
	w.cur = n
	w.mu.Unlock()
	_ = w.f.Close()
	w.f, w.num, w.off, w.cap, w.dirty, w.watch = f, n, logHeaderSize, size, 0, watch
	w.prepareNext()
	return nil
}

// zero overwrites bytes from to end of the current segment with zeros
// and syncs them.
func (w *logWriter) zero(from, to int64) error {
	if _, err := w.f.WriteAt(make([]byte, to-from), from); err != nil {
		return err
	}
	return fdatasync(w.f)
}

// maxKeptLogBuffer bounds the record buffer the log writer keeps from one
// append to the next.
const maxKeptLogBuffer = 1 << 20

// append writes one group's changes as the next record and syncs it. On
// failure nothing counts as written: the next append overwrites the spot.
func (w *logWriter) append(changes []queuedChange) error {
	// The record is built in w.buf, its header in front of the payload.
	rec, err := encodeGroup(append(w.buf[:0], make([]byte, recHeaderSize)...), changes)
	if err != nil {
		return err
	}
	if cap(rec) <= maxKeptLogBuffer {
		w.buf = rec[:0]
	} else {
		w.buf = nil // a rare large group's buffer is not kept
	}
	need := int64(len(rec))
	if w.off+need > w.cap {
		if err := w.roll(need); err != nil {
			return err
		}
	}
	if lost := w.watch.check(); lost != nil {
		return lost
	}
	putLogRecordHeader(rec, w.id, w.seq+1, rec[recHeaderSize:])
	if end := w.off + int64(len(rec)); w.dirty > end {
		rec = append(rec, make([]byte, w.dirty-end)...)
	}
	if _, err := w.f.WriteAt(rec, w.off); err != nil {
		w.dirty = max(w.dirty, w.off+int64(len(rec)))
		return err
	}
	err = fdatasync(w.f)
	if err == nil && w.syncFault != nil {
		err = w.syncFault()
	}
	if err != nil {
		w.dirty = max(w.dirty, w.off+int64(len(rec)))
		return err
	}
	if lost := w.watch.check(); lost != nil {
		return lost
	}
	w.off += need
	w.dirty = 0
	w.seq++
	return nil
}

// firstNeeded is the first segment retire(applied) keeps: the oldest
// holding a record after applied, or the current one.
func (w *logWriter) firstNeeded(applied uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.cur
	for n, last := range w.closed {
		if last > applied && n < first {
			first = n
		}
	}
	return first
}

// retire deletes the closed segments whose records are all applied.
func (w *logWriter) retire(applied uint64) {
	// In ascending order: a crash meanwhile leaves the later segments,
	// numbered without gaps.
	w.mu.Lock()
	defer w.mu.Unlock()
	nums := slices.Sorted(maps.Keys(w.closed))
	for _, n := range nums {
		if w.closed[n] > applied {
			return
		}
		if err := os.Remove(segmentPath(w.dir, n)); err != nil && !os.IsNotExist(err) {
			return
		}
		delete(w.closed, n)
	}
}

func (w *logWriter) close() error {
	w.mu.Lock()
	for w.making {
		w.mu.Unlock()
		runtime.Gosched()
		w.mu.Lock()
	}
	if w.next != nil {
		// Prepared, never written: an empty segment is harmless, but
		// leaves nothing to read either.
		_ = w.next.Close()
		_ = os.Remove(segmentPath(w.dir, w.nextNum))
		w.next = nil
	}
	w.mu.Unlock()
	return w.f.Close()
}

// readLog reads every segment of dir, checking each, and returns the
// records after applied, in order, the highest segment number and the
// last sequence number seen. With salvage, damage is skipped (described
// in skipped) and the damaged segments' paths returned.
func readLog(dir string, id [16]byte, applied, needed uint64, salvage bool) (recs []logRecord, lastNum, lastSeq uint64, skipped []string, damaged []string, err error) {
	nums, err := logSegments(dir)
	if err != nil {
		return nil, 0, 0, nil, nil, fmt.Errorf("%w: %s: %v", ErrStore, dir, err)
	}
	if needed != 0 && !slices.Contains(nums, needed) {
		// The data file names it: it was made, and not yet deleted.
		reason := fmt.Sprintf("missing: the data file needs the records of write-ahead log segment %d and later (written since its last checkpoint), and that segment is gone (deleted?), with whatever acknowledged writes it held", needed)
		if !salvage {
			return nil, 0, 0, nil, nil, &DamageError{Path: segmentPath(dir, needed), Reason: reason}
		}
		skipped = append(skipped, segmentPath(dir, needed)+": "+reason)
	}
	lastSeq = applied
	prevSeq := uint64(0)
	for i, n := range nums {
		path := segmentPath(dir, n)
		damage := func(reason string) error {
			return &DamageError{Path: path, Reason: reason}
		}
		if i > 0 && n != nums[i-1]+1 {
			if !salvage {
				return nil, 0, 0, nil, nil, damage(fmt.Sprintf("segment %d is missing before it (a log segment was deleted)", nums[i-1]+1))
			}
			skipped = append(skipped, fmt.Sprintf("%s: segment %d is missing before it", path, nums[i-1]+1))
		}
		b, size, herr, rerr := readSegment(path, n, id)
		if rerr != nil {
			return nil, 0, 0, nil, nil, fmt.Errorf("%w: %s: %v", ErrStore, path, rerr)
		}
		if herr != nil {
			if !salvage {
				return nil, 0, 0, nil, nil, damage(herr.Error())
			}
			skipped = append(skipped, fmt.Sprintf("%s: %v: the whole segment", path, herr))
			damaged = append(damaged, path)
			continue
		}
		serr := checkLogSize(b, size)
		if serr != nil {
			if !salvage {
				return nil, 0, 0, nil, nil, damage(serr.Error())
			}
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, serr))
			damaged = append(damaged, path)
		}
		s := scanSegment(b, id, salvage)
		if s.bad != "" {
			return nil, 0, 0, nil, nil, damage(s.bad)
		}
		if s.torn && i < len(nums)-1 && !laterEmpty(dir, nums[i+1:], id) {
			if !salvage {
				return nil, 0, 0, nil, nil, damage(fmt.Sprintf("the record at offset %d does not check and later segments hold records", s.end))
			}
		}
		for _, m := range s.skipped {
			skipped = append(skipped, path+": "+m)
		}
		if len(s.skipped) > 0 && serr == nil {
			damaged = append(damaged, path)
		}
		for _, r := range s.recs {
			if prevSeq != 0 && r.seq != prevSeq+1 && !salvage {
				return nil, 0, 0, nil, nil, damage(fmt.Sprintf("record %d follows record %d (records are missing)", r.seq, prevSeq))
			}
			prevSeq = r.seq
			if r.seq <= applied {
				continue
			}
			if len(recs) == 0 && r.seq != applied+1 && !salvage {
				return nil, 0, 0, nil, nil, damage(fmt.Sprintf("the data file has the records up to %d but the log starts at %d (records are missing: the data file is older than the log, restored from a backup?)", applied, r.seq))
			}
			r.path = path
			recs = append(recs, r)
			lastSeq = max(lastSeq, r.seq)
		}
	}
	if len(nums) > 0 {
		// The writer's next segment is numbered after every one on disk,
		// damaged ones included, whose names stay taken until dropped.
		lastNum = nums[len(nums)-1]
	}
	return recs, lastNum, lastSeq, skipped, damaged, nil
}

// laterEmpty: the segments nums hold no record (prepared, never written).
func laterEmpty(dir string, nums []uint64, id [16]byte) bool {
	for _, n := range nums {
		b, size, herr, err := readSegment(segmentPath(dir, n), n, id)
		if err != nil || herr != nil || checkLogSize(b, size) != nil || !allZero(b[logHeaderSize:]) {
			return false
		}
	}
	return true
}
