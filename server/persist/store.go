package persist

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// StoreFile is the name of the bbolt database inside Options.DataDir.
const StoreFile = "statestore.db"

// ErrStore wraps every failure to open, read or write the durable store;
// match it with errors.Is.
var ErrStore = errors.New("server: durable store")

// DamageError reports a data file that failed a check on open or load: a
// bbolt meta page lost, a file shorter than its pages, a page that is not
// what its parent says, a record whose checksum does not match. New refuses
// to start on it rather than serve a value it cannot vouch for;
// Options.Repair salvages what is readable instead. It wraps ErrStore.
type DamageError struct {
	Path   string // the data file
	Key    []byte // the damaged record's key; nil when the damage is not in one record
	Reason string // what is wrong, in one line
}

func (e *DamageError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s is damaged: ", ErrStore, e.Path)
	if e.Key != nil {
		fmt.Fprintf(&b, "record of key %s: ", displayKey(e.Key))
	}
	b.WriteString(e.Reason)
	if strings.HasPrefix(filepath.Base(e.Path), LogPrefix) {
		b.WriteString("; to start anyway, start with ssgen serve --repair (Go: server.Options.Repair), which keeps every record of the write-ahead log that checks and sets the damaged segment aside, or restore a backup copy of the whole data directory")
	} else {
		b.WriteString("; to start anyway, repair it with ssgen serve --repair (Go: server.Options.Repair), which copies the readable keys into a new file and keeps the damaged one aside, or restore a backup copy of the file")
	}
	// One line, whatever a panic message or a key contained: the CLI
	// prints this as its whole diagnostic.
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, b.String())
}

func (e *DamageError) Unwrap() error { return ErrStore }

// maxDisplayKey is how much of a key displayKey shows.
const maxDisplayKey = 256

// displayKey shows a key quoted when it is printable text, else as hex;
// a key longer than maxDisplayKey is cut there, marked with its length.
func displayKey(k []byte) string {
	if len(k) > maxDisplayKey {
		return fmt.Sprintf("%s…(%d bytes)", displayKey(k[:maxDisplayKey]), len(k))
	}
	if utf8.Valid(k) && strings.IndexFunc(string(k), func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return strconv.Quote(string(k))
	}
	return "0x" + hex.EncodeToString(k)
}

// MaxKeyBytes is the longest key the data file can hold: bbolt's limit,
// as a record's bucket key is the state store key itself. A server with a
// data directory refuses to keep a longer key (engine.Config.MaxKeptKeyBytes);
// a log record of one, written before that check, is refused at start
// (start with Options.Repair to leave it out).
const MaxKeyBytes = bolt.MaxKeySize

// errKeyTooLong is the reason a put of key cannot be stored.
func errKeyTooLong(key string) error {
	return fmt.Errorf("key %s is %d bytes, over the %d bytes a key of the data file may have", displayKey([]byte(key)), len(key), MaxKeyBytes)
}

// checkKeys refuses a group that puts a key the data file cannot hold
// before it reaches the log: the engine refuses such writes
// (MaxKeptKeyBytes), and one in the log would stop every checkpoint.
func checkKeys(queued []queuedChange) error {
	for _, q := range queued {
		if !q.Delete && len(q.Key) > MaxKeyBytes {
			return fmt.Errorf("%w: %v", ErrStore, errKeyTooLong(q.Key))
		}
	}
	return nil
}

// Bucket and meta key names. The format number lets a later layout refuse
// (or migrate) a file written by this one instead of misreading it.
// Format 1 records carried no checksum; format 2 adds one to every record
// and to the clock floor; format 3 adds the store id and the last
// write-ahead log record the file holds (checkpoint.go), so that a
// build that does not read the log refuses the file instead of missing
// writes the log has. A format 1 file is verified as far as it can be
// (every record must decode) and a format 1 or 2 file is upgraded in place
// on open.
var (
	bucketKeys  = []byte("keys")
	bucketMeta  = []byte("meta")
	metaFormat  = []byte("format")
	metaClock   = []byte("clock")
	formatValue = []byte("3")
	formatV2    = []byte("2")
	formatV1    = []byte("1")
)

// storedRecord is a key's value in the keys bucket (the bucket key is the
// state store key). Versions are kept in their wire text, deadlines as
// Unix nanoseconds (0 = none): both survive a restart exactly. Sum is the
// CRC-32C of the key and the other fields (recordSum): bbolt checks no
// page contents, so without it a flipped bit in a value would be served.
type storedRecord struct {
	Value    []byte `msgpack:"v"`
	Version  string `msgpack:"ver"`
	Fence    string `msgpack:"ft,omitempty"`
	Deadline int64  `msgpack:"dl,omitempty"`
	Sum      uint32 `msgpack:"crc"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSum is the checksum of a record under its key: CRC-32C over the
// four fields' lengths and the deadline (big-endian), then the key, value,
// version and fence bytes. The lengths make moving bytes from one field to
// the next change the sum, and the key is included, so a record that ends
// up under another key fails.
func recordSum(key, value []byte, version, fence string, deadline int64) uint32 {
	// The strings are read in place (crc32 does not keep or change its
	// input): converting them would cost two allocations per record at
	// start.
	return recordSumBytes(key, value, unsafe.Slice(unsafe.StringData(version), len(version)),
		unsafe.Slice(unsafe.StringData(fence), len(fence)), deadline)
}

func recordSumBytes(key, value, version, fence []byte, deadline int64) uint32 {
	head := appendSumHead(make([]byte, 0, sumHeadSize), key, value, len(version), len(fence), deadline)
	sum := crc32.Update(0, castagnoli, head)
	sum = crc32.Update(sum, castagnoli, key)
	sum = crc32.Update(sum, castagnoli, value)
	sum = crc32.Update(sum, castagnoli, version)
	return crc32.Update(sum, castagnoli, fence)
}

const sumHeadSize = 4*4 + 8

// appendSumHead appends what recordSum sums first: the four fields'
// lengths and the deadline, big-endian.
func appendSumHead(b, key, value []byte, version, fence int, deadline int64) []byte {
	be := binary.BigEndian
	b = be.AppendUint32(b, uint32(len(key)))
	b = be.AppendUint32(b, uint32(len(value)))
	b = be.AppendUint32(b, uint32(version))
	b = be.AppendUint32(b, uint32(fence))
	return be.AppendUint64(b, uint64(deadline))
}

// Store keeps the engine's durable keys in a bbolt file, in front of
// which a write-ahead log takes each group commit (wal.go, checkpoint.go;
// not with Options.Direct). Every apply is one fsynced bbolt transaction,
// so a change it accepted survives a crash of the process or of the
// machine; the group commit (commit.go) gives the log, or apply, the
// changes of many writes at a time.
type Store struct {
	db   *bolt.DB
	path string
	// watch checks around each commit that the file is still the one at
	// path, as the store left it (watch.go).
	watch *fileWatch
	// lost is set for good once the file was found replaced, deleted or
	// changed by another writer (or bbolt panicked writing it): every
	// later apply fails with it. Read by Ready, from any goroutine.
	lost atomic.Pointer[fileLostError]
	// wedged: bbolt panicked and its write transaction could not be
	// rolled back, so it still holds the writer lock that DB.Close waits
	// for; close then only closes the file.
	wedged bool
	file   *os.File // bbolt's descriptor of the file
	// inTx, set by tests, runs inside each apply's transaction before its
	// writes (after the first check of the file).
	inTx func()
	// afterBoltStat, set by tests, runs right after boltAtPath has
	// examined the data file.
	afterBoltStat func()

	// isNew: the file holds no transaction of ours (just created by
	// bbolt), so missing buckets are to be created, not a loss.
	isNew bool
	// What the open read: the clock floor, and the records of a format 1
	// file until it is upgraded.
	loaded []engine.Record
	floor  hlc.HLC
	count  int // records in the file
	// scratch is applyQueued's buffer.
	scratch []engine.Change

	// The write-ahead log (wal.go, checkpoint.go): the
	// store id its segments carry, the last record the file holds, the
	// number of the next segment, and without Options.DirectCommits the
	// writer and checkpointer (nil without).
	dir         string
	id          [16]byte
	applied     uint64
	needSegment uint64 // the first segment the file needs (metaSegment), 0: none
	nextSegment uint64
	replayed    uint64   // the last segment replayLog read, dropped by dropSegments
	damagedSegs []string // the segments it found damaged, with repair
	wal         *logWriter
	ckpt        *checkpointer
	ckptMeta    *checkpointMeta // set while a checkpoint's transaction runs
	ckptMu      sync.Mutex      // held by a checkpoint (boltAtPath)
	closed      atomic.Bool     // close began: log appends fail
}

// Options are what Open takes from the server's options.
type Options struct {
	Repair bool             // salvage a damaged file instead of refusing it
	Direct bool             // no write-ahead log: each group commit is a bbolt transaction
	Log    *slog.Logger     // where a repair is reported; nil: slog.Default()
	Now    func() time.Time // names the damaged file's copy; nil: time.Now
}

// Open opens (creating it and dir if needed) the store in dir, checks
// it and loads every record, verifying each. A file locked by another
// process fails after a second rather than waiting. A damaged file fails
// with a *DamageError, or with o.Repair is salvaged (repairStore) and the
// salvaged file opened in its place.
func Open(dir string, o Options) (*Store, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStore, err)
	}
	if err := checkDir(dir); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStore, err)
	}
	path := filepath.Join(dir, StoreFile)
	s, err := openChecked(path, o)
	var damage *DamageError
	if err == nil || !o.Repair || !errors.As(err, &damage) || damage.Path != path {
		return s, err
	}
	o.Log.Error("data file damaged, repairing", "file", path, "err", err)
	if err := repairStore(path, o); err != nil {
		return nil, err
	}
	return openChecked(path, o)
}

// openChecked is open plus every check, without repair of the bbolt file
// (with o.Repair, the write-ahead log's damage is skipped).
func openChecked(path string, o Options) (*Store, error) {
	isNew, err := checkDataFile(path)
	if err != nil {
		return nil, err
	}
	db, file, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, isNew: isNew, file: file, dir: filepath.Dir(path)}
	if err := guarded(path, s.prepare); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.replayLog(o); err != nil {
		_ = db.Close()
		return nil, err
	}
	// The writer's first segment exists before the file names it, and
	// the segments replayed are deleted after: a crash anywhere in
	// between leaves the segment the file names on disk.
	first := uint64(0) // with DirectCommits no segment is needed
	if !o.Direct {
		if s.wal, err = newLogWriter(s.dir, s.id, s.nextSegment, s.applied); err != nil {
			_ = db.Close()
			hint := ""
			if errors.Is(err, syscall.ENOSPC) {
				hint = fmt.Sprintf(" (a start makes a %d MiB log segment; with less space free, start with --direct-commits, which needs none)", segmentSize>>20)
			}
			return nil, fmt.Errorf("%w: write-ahead log: %v%s", ErrStore, err, hint)
		}
		first = s.nextSegment
	}
	fail := func(err error) (*Store, error) {
		if s.wal != nil {
			_ = s.wal.close()
		}
		_ = db.Close()
		return nil, err
	}
	if first != s.needSegment || s.replayed > 0 {
		if err := s.putLogSegment(first); err != nil {
			return fail(err)
		}
	}
	if err := s.dropSegments(o); err != nil {
		return fail(err)
	}
	if s.watch, err = newFileWatch(file, path, db.Info().PageSize); err != nil {
		return fail(fmt.Errorf("%w: %s: %v", ErrStore, path, err))
	}
	if !o.Direct {
		s.ckpt = newCheckpointer(s, o.Log)
		s.ckpt.applied = s.applied
	}
	return s, nil
}

// openBolt opens the file with bbolt, turning its panics into a
// DamageError (it asserts on a freelist page that is not one). It also
// returns bbolt's descriptor of the file.
func openBolt(path string) (*bolt.DB, *os.File, error) {
	var file *os.File
	opts := &bolt.Options{Timeout: time.Second, OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag|noFollow, mode)
		file = f
		return f, err
	}}
	var db *bolt.DB
	err := guarded(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, opts)
		return err
	})
	var damage *DamageError
	switch {
	case errors.As(err, &damage):
		// A panic inside Open leaves its file open, and with it the
		// file's lock, which would refuse a repair in this process.
		// (Its memory map stays: only a failed start pays for it.)
		if file != nil {
			_ = file.Close()
		}
		return nil, nil, err
	case errors.Is(err, berrors.ErrTimeout):
		return nil, nil, fmt.Errorf("%w: open %s: locked by another process (is another ssgen serve using this data dir?)", ErrStore, path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, nil, &DamageError{Path: path, Reason: "bbolt refuses it: " + err.Error()}
	case err != nil:
		return nil, nil, fmt.Errorf("%w: open %s: %v", ErrStore, path, err)
	}
	return db, file, nil
}

// guarded runs fn, which reads a bbolt file that may be damaged, turning
// a panic (bbolt asserts that a page is what its parent says) or a memory
// fault (a page number past the end of the mapped file) into a
// DamageError instead of ending the process. Faults become panics only in
// this goroutine, only while fn runs.
func guarded(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &DamageError{Path: path, Reason: fmt.Sprintf("bbolt failed reading it: %v", p)}
		}
	}()
	return fn()
}

// prepare checks the format, reads and verifies every record (keeping
// them only to upgrade a format 1 file), and only then writes: the
// buckets of a new file, or the upgrade of a format 1 file. Nothing is
// written to a file that failed a check.
func (s *Store) prepare() error {
	var format []byte
	fresh := false
	err := s.db.View(func(tx *bolt.Tx) error {
		meta, keys := tx.Bucket(bucketMeta), tx.Bucket(bucketKeys)
		if meta == nil && keys == nil && s.isNew {
			fresh = true
			return nil
		}
		if meta != nil {
			format = bytes.Clone(meta.Get(metaFormat))
		}
		known := bytes.Equal(format, formatValue) || bytes.Equal(format, formatV2) || bytes.Equal(format, formatV1)
		switch {
		case !known && len(format) > 0 && strings.Trim(string(format), "0123456789") == "":
			// A later build's file, not a damaged one: repair must not
			// rewrite it.
			return fmt.Errorf("%w: %s: unknown format %q (this build reads %q to %q)", ErrStore, s.path, format, formatV1, formatValue)
		case meta == nil || keys == nil:
			// A root page emptied by damage looks like this; only a file
			// bbolt has just created may lack the buckets.
			return &DamageError{Path: s.path, Reason: "the keys or the meta bucket is missing"}
		case !known:
			return &DamageError{Path: s.path, Reason: fmt.Sprintf("format number %q", format)}
		}
		var err error
		if bytes.Equal(format, formatValue) {
			if s.id, s.applied, s.needSegment, err = readLogMeta(meta); err != nil {
				return &DamageError{Path: s.path, Reason: err.Error()}
			}
		}
		s.floor, s.loaded, err = s.verify(tx, format)
		return err
	})
	if err != nil {
		return err
	}
	if !bytes.Equal(format, formatValue) {
		if s.id, err = newStoreID(); err != nil {
			return fmt.Errorf("%w: %v", ErrStore, err)
		}
	}
	switch {
	case fresh:
		err = s.db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if _, err := tx.CreateBucketIfNotExists(bucketKeys); err != nil {
				return err
			}
			if err := meta.Put(metaStoreID, summed(bytes.Clone(s.id[:]))); err != nil {
				return err
			}
			return meta.Put(metaFormat, formatValue)
		})
	case bytes.Equal(format, formatV1):
		err = s.upgrade()
	case bytes.Equal(format, formatV2):
		// Format 2 to 3: the records stay as they are.
		err = s.db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(metaStoreID, summed(bytes.Clone(s.id[:]))); err != nil {
				return err
			}
			return meta.Put(metaFormat, formatValue)
		})
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStore, s.path, err)
	}
	return nil
}

// upgrade rewrites a verified format 1 file as format 2, in one
// transaction: a crash meanwhile leaves the format 1 file as it was.
func (s *Store) upgrade() error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(metaStoreID, summed(bytes.Clone(s.id[:]))); err != nil {
			return err
		}
		return writeAll(tx.Bucket(bucketMeta), tx.Bucket(bucketKeys), s.loaded, s.floor)
	})
	s.loaded = nil
	return err
}

// writeAll stores recs, the clock floor (when set) and the format number
// in the current format: the upgrade of a format 1 file and the file a
// repair writes.
func writeAll(meta, keys *bolt.Bucket, recs []engine.Record, floor hlc.HLC) error {
	for _, r := range recs {
		v, err := encodeRecord(r)
		if err != nil {
			return err
		}
		if err := keys.Put([]byte(r.Key), v); err != nil {
			return err
		}
	}
	if !floor.IsZero() {
		if err := meta.Put(metaClock, encodeFloor(floor)); err != nil {
			return err
		}
	}
	return meta.Put(metaFormat, formatValue)
}

// errChecksum is a record or floor whose checksum does not match.
var errChecksum = errors.New("checksum mismatch (the bytes on disk are not the ones written)")

// decodeRecord turns a bucket entry into a Record owning its bytes (bbolt's
// slices are only valid inside the transaction). With verify, the record's
// checksum must match (format 2); without, it is not looked at (format 1
// has none).
func decodeRecord(k, v []byte, verify bool) (engine.Record, error) {
	d := newRecordDecoder()
	if err := d.decode(k, v, verify); err != nil {
		return engine.Record{}, err
	}
	return d.record(k), nil
}

func encodeRecord(r engine.Record) ([]byte, error) {
	return appendRecord(make([]byte, 0, recordSizeHint(r)), r), nil
}

// recordSizeHint is about the encoded size of r (exact unless its clock
// values are unusually long), for one allocation per record.
func recordSizeHint(r engine.Record) int {
	return 64 + len(r.Value) + 2*len(r.Version.Node) + len(r.Fence.Node)
}

// appendRecord appends r as the keys bucket stores it: the msgpack map of
// storedRecord, byte for byte what msgpack.Marshal(&storedRecord{...})
// writes (TestAppendRecordIsMarshal), written directly: the reflective
// encoder cost nine allocations per kept SET.
func appendRecord(b []byte, r engine.Record) []byte {
	// The clock values' texts and the checksum's header are first written
	// past the end of b, then the record after them, which is moved down
	// over them at the end: crc32 takes its input through an interface
	// the compiler cannot see through, so a buffer on the stack would be
	// moved to the heap on every call.
	start := len(b)
	b = r.Version.AppendText(b)
	verEnd := len(b)
	if !r.Fence.IsZero() {
		b = r.Fence.AppendText(b)
	}
	fenceEnd := len(b)
	var deadline int64
	if !r.Deadline.IsZero() {
		deadline = r.Deadline.UnixNano()
	}
	key := unsafe.Slice(unsafe.StringData(r.Key), len(r.Key))
	b = appendSumHead(b, key, r.Value, verEnd-start, fenceEnd-verEnd, deadline)
	sum := crc32.Update(0, castagnoli, b[fenceEnd:])
	sum = crc32.Update(sum, castagnoli, key)
	sum = crc32.Update(sum, castagnoli, r.Value)
	sum = crc32.Update(sum, castagnoli, b[start:fenceEnd])
	b = b[:fenceEnd]
	ver, fence := b[start:verEnd], b[verEnd:fenceEnd]

	fields := byte(3) // v, ver, crc; ft and dl are omitted when empty
	if len(fence) > 0 {
		fields++
	}
	if deadline != 0 {
		fields++
	}
	be := binary.BigEndian
	b = append(b, 0x80|fields) // fixmap
	b = append(b, 0xa1, 'v')
	switch n := len(r.Value); {
	case r.Value == nil:
		b = append(b, 0xc0) // nil
	case n < 1<<8:
		b = append(b, 0xc4, byte(n)) // bin 8
	case n < 1<<16:
		b = be.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = be.AppendUint32(append(b, 0xc6), uint32(n))
	}
	b = append(b, r.Value...)
	b = append(b, 0xa3, 'v', 'e', 'r')
	b = appendMsgpackStr(b, ver)
	if len(fence) > 0 {
		b = append(b, 0xa2, 'f', 't')
		b = appendMsgpackStr(b, fence)
	}
	if deadline != 0 {
		b = be.AppendUint64(append(b, 0xa2, 'd', 'l', 0xd3), uint64(deadline)) // int 64
	}
	b = be.AppendUint32(append(b, 0xa3, 'c', 'r', 'c', 0xce), sum) // uint 32
	n := copy(b[start:], b[fenceEnd:])
	return b[:start+n]
}

// appendMsgpackStr appends s as a msgpack str in the shortest form, as
// msgpack's encoder does.
func appendMsgpackStr(b, s []byte) []byte {
	be := binary.BigEndian
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n)) // fixstr
	case n < 1<<8:
		b = append(b, 0xd9, byte(n)) // str 8
	case n < 1<<16:
		b = be.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = be.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// encodeFloor is the format 2 clock floor: the HLC's text, a space and the
// text's CRC-32C in 8 hex digits.
func encodeFloor(h hlc.HLC) []byte {
	t := h.String()
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Checksum([]byte(t), castagnoli))
	b := make([]byte, 0, len(t)+1+2*len(sum))
	return hex.AppendEncode(append(append(b, t...), ' '), sum[:])
}

// decodeFloor reads a stored clock floor (absent: zero). With verify it is
// format 2's text and checksum, else format 1's bare text.
func decodeFloor(b []byte, verify bool) (hlc.HLC, error) {
	if b == nil {
		return hlc.HLC{}, nil
	}
	t := string(b)
	if verify {
		i := strings.LastIndexByte(t, ' ')
		if i < 0 {
			return hlc.HLC{}, fmt.Errorf("%q: no checksum", b)
		}
		sum, err := strconv.ParseUint(t[i+1:], 16, 32)
		if err != nil || len(t)-i-1 != 8 || uint32(sum) != crc32.Checksum([]byte(t[:i]), castagnoli) {
			return hlc.HLC{}, fmt.Errorf("%q: %w", b, errChecksum)
		}
		t = t[:i]
	}
	h, err := hlc.Parse(t)
	if err != nil {
		return hlc.HLC{}, fmt.Errorf("%q: %v", b, err)
	}
	return h, nil
}

// applyQueued writes a group commit's changes, in order, in one
// transaction (apply). Only the group commit's writer calls it.
func (s *Store) applyQueued(queued []queuedChange) error {
	if err := checkKeys(queued); err != nil {
		return err
	}
	if s.wal != nil {
		return s.appendLog(queued)
	}
	flat := s.scratch[:0]
	for _, q := range queued {
		flat = append(flat, q.Change)
	}
	err := s.apply(flat)
	clear(flat)
	s.scratch = flat[:0]
	return err
}

// apply writes changes in one transaction and returns once it is on disk,
// in the file at the store's path (the watch checks it before and after).
// The highest version among them raises the stored clock floor in the
// same transaction, so the floor never lags the records.
func (s *Store) apply(changes []engine.Change) error {
	if lost := s.lost.Load(); lost != nil {
		return lost
	}
	if lost := s.watch.before(); lost != nil {
		return s.lose(lost)
	}
	txid, err := s.commit(changes)
	if lost := s.lost.Load(); lost != nil {
		return lost
	}
	// A transaction that failed (a full disk, say) may still have left
	// its meta page in the file; the check then accepts that too.
	if txid != 0 {
		if lost := s.watch.after(txid, err == nil); lost != nil {
			return s.lose(lost)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	return nil
}

// lose stops the store for good with lost (the first cause is kept).
func (s *Store) lose(lost *fileLostError) *fileLostError {
	s.lost.CompareAndSwap(nil, lost)
	return s.lost.Load()
}

// commit runs apply's transaction, and returns its id (0 when none began).
// bbolt panics, or faults reading its
// map past the end of a file truncated under it, when another writer
// changed the file during the transaction (cp over it, say): that is
// recovered here, in the writer's goroutine, and stops the store (lost)
// rather than the process.
func (s *Store) commit(changes []engine.Change) (txid uint64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var tx *bolt.Tx
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		// Rollback as called by a user does not read the map; it releases
		// the writer lock. If even that fails, Close must not wait for
		// the lock.
		s.wedged = tx != nil && !rollBack(tx)
		s.lose(s.watch.lost("was changed under bbolt, which failed writing it (%v)", p))
		err = s.lost.Load()
	}()
	tx, err = s.db.Begin(true)
	if err != nil {
		return 0, err
	}
	txid = uint64(tx.ID())
	if s.inTx != nil {
		s.inTx()
	}
	if err := s.put(tx, changes); err != nil {
		_ = tx.Rollback()
		return txid, err
	}
	return txid, tx.Commit()
}

// rollBack rolls back a write transaction bbolt panicked in, and reports
// whether it is closed.
func rollBack(tx *bolt.Tx) (closed bool) {
	defer func() {
		if recover() != nil {
			closed = tx.DB() == nil
		}
	}()
	_ = tx.Rollback()
	return tx.DB() == nil
}

// put writes changes and the raised clock floor into tx, and what a
// checkpoint adds (putCheckpointMeta).
func (s *Store) put(tx *bolt.Tx, changes []engine.Change) error {
	if err := s.putCheckpointMeta(tx.Bucket(bucketMeta)); err != nil {
		return err
	}
	keys, meta := tx.Bucket(bucketKeys), tx.Bucket(bucketMeta)
	top, _ := decodeFloor(meta.Get(metaClock), true) // a bad floor is replaced below
	raised := false
	for _, c := range changes {
		if c.Version.Compare(top) > 0 {
			top, raised = c.Version, true
		}
		if c.Delete {
			if err := keys.Delete([]byte(c.Key)); err != nil {
				return err
			}
			continue
		}
		v, err := encodeRecord(c.Record)
		if err != nil {
			return err
		}
		if err := keys.Put([]byte(c.Key), v); err != nil {
			return err
		}
	}
	if raised {
		return meta.Put(metaClock, encodeFloor(top))
	}
	return nil
}

// DeleteKeys removes records (the ones Restore found expired).
func (s *Store) DeleteKeys(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	changes := make([]engine.Change, len(keys))
	for i, k := range keys {
		changes[i] = engine.Change{Record: engine.Record{Key: k}, Delete: true}
	}
	return s.apply(changes)
}

// Records reads and verifies every stored record again, and the highest
// version the store ever accepted (deleted keys included): what is on
// disk now.
func (s *Store) Records() ([]engine.Record, hlc.HLC, error) {
	var recs []engine.Record
	var floor hlc.HLC
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		floor, _, err = s.verify(tx, formatValue)
		return err
	})
	if err == nil {
		_, err = s.RestoreInto(func(chunk []engine.Record) { recs = append(recs, chunk...) })
	}
	if err != nil {
		return nil, hlc.HLC{}, err
	}
	return recs, floor, nil
}

// Used is how many bytes of the file the last transaction uses (bbolt's
// high-water page; the rest is room bbolt has allocated ahead).
func (s *Store) Used() int64 {
	var n int64
	_ = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		return nil
	})
	return n
}

// SetInTx makes fn run inside each apply's transaction before its writes,
// after the first check of the file (fault injection in tests); nil
// removes it. Set it while no write is under way.
func (s *Store) SetInTx(fn func()) { s.inTx = fn }

// Count is how many records the file held when it was opened.
func (s *Store) Count() int { return s.count }

// Floor is the highest version the store ever accepted, deleted keys
// included, as read when it was opened.
func (s *Store) Floor() hlc.HLC { return s.floor }

// Lost reports whether the file was found replaced, deleted or changed
// by another writer: every later kept write is refused.
func (s *Store) Lost() bool { return s.lost.Load() != nil }

// Close checkpoints and closes the write-ahead log, then closes the file.
func (s *Store) Close() error {
	s.closeLog()
	if s.wedged {
		// bbolt's map stays (the process is most likely about to end):
		// the descriptor is closed, which releases the file's lock.
		_ = s.file.Close()
		return nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("%w: close: %v", ErrStore, err)
	}
	return nil
}

// isNotExist reports a missing file (a new data directory).
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
