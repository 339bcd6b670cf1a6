package persist

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// Checkpoints bring the bbolt file up to date with the write-ahead log
// (wal.go), off the request path: the changes of the groups
// appended since the last one, a key changed many times written once, in
// one bbolt transaction (its two fdatasyncs) that also stores the last
// sequence number it applied. The segments whose records are all applied
// are then deleted. A start replays the records after that number.

// Meta keys of format 3: the store id the log's segments carry, the
// last log sequence number the file holds, and the first segment whose
// records the file may not hold yet (absent or 0: none; files of earlier
// builds lack it), each followed by its CRC-32C. That segment exists from
// before the file names it until after the file stops naming it, so a
// start that does not find it knows records were lost with it.
var (
	metaStoreID = []byte("store-id")
	metaApplied = []byte("log-applied")
	metaSegment = []byte("log-segment")
)

// Tests change these.
var (
	// checkpointBytes of log since the last checkpoint start the next.
	checkpointBytes int64 = 2 << 20
	// checkpointEvery starts one when changes wait, however few.
	checkpointEvery = time.Second
)

func summed(b []byte) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// unsum checks and strips the CRC of a summed value of n bytes.
func unsum(b []byte, n int) ([]byte, bool) {
	if len(b) != n+4 || binary.BigEndian.Uint32(b[n:]) != crc32.Checksum(b[:n], castagnoli) {
		return nil, false
	}
	return b[:n], true
}

func encodeApplied(seq uint64) []byte {
	return summed(binary.BigEndian.AppendUint64(nil, seq))
}

func newStoreID() ([16]byte, error) {
	var id [16]byte
	_, err := rand.Read(id[:])
	return id, err
}

// readLogMeta reads the store id, applied number and needed segment of a
// format 3 file.
func readLogMeta(meta *bolt.Bucket) (id [16]byte, applied, segment uint64, err error) {
	b, ok := unsum(meta.Get(metaStoreID), len(id))
	if !ok {
		return id, 0, 0, errors.New("stored store id is missing or does not check")
	}
	copy(id[:], b)
	if v := meta.Get(metaApplied); v != nil {
		b, ok := unsum(v, 8)
		if !ok {
			return id, 0, 0, errors.New("stored log position does not check")
		}
		applied = binary.BigEndian.Uint64(b)
	}
	if v := meta.Get(metaSegment); v != nil {
		b, ok := unsum(v, 8)
		if !ok {
			return id, 0, 0, errors.New("stored log segment number does not check")
		}
		segment = binary.BigEndian.Uint64(b)
	}
	return id, applied, segment, nil
}

// putLogSegment records n as the first segment the file needs (0: none),
// in a transaction of its own (at open and close, outside the file watch).
func (s *Store) putLogSegment(n uint64) error {
	err := guarded(s.path, func() error {
		return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaSegment, encodeApplied(n)) })
	})
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStore, s.path, err)
	}
	return nil
}

// checkpointMeta, set while a checkpoint's transaction runs, is what it
// stores beside the changes.
type checkpointMeta struct {
	applied uint64
	top     hlc.HLC // the highest version among the changes it folds
	// segment, when set, is the first segment whose records the file
	// does not hold once the transaction commits (metaSegment).
	segment    uint64
	setSegment bool
}

// replayLog applies the log's records after the file's applied number to
// the bbolt file in one transaction. It leaves s.nextSegment and s.applied
// for the log writer, and the segments read (the damaged ones, with
// repair) for dropSegments once the file names the writer's first.
func (s *Store) replayLog(o Options) error {
	recs, lastNum, lastSeq, skipped, damaged, err := readLog(s.dir, s.id, s.applied, s.needSegment, o.Repair)
	if err != nil {
		return err
	}
	s.replayed, s.damagedSegs = lastNum, damaged
	for _, m := range skipped {
		o.Log.Error("repair: left out of the write-ahead log", "what", m)
	}
	s.nextSegment = lastNum + 1
	if len(recs) > 0 {
		var changes []engine.Change
		var top hlc.HLC
		d := newRecordDecoder()
		for _, r := range recs {
			var tooLong error
			err := decodeGroup(r.payload, d, func(c engine.Change) {
				if !c.Delete && len(c.Key) > MaxKeyBytes {
					// Kept by a build that did not refuse such keys:
					// bbolt would refuse the whole replay.
					if tooLong == nil {
						tooLong = errKeyTooLong(c.Key)
					}
					if o.Repair {
						o.Log.Error("repair: left out of the write-ahead log", "record", r.seq, "err", errKeyTooLong(c.Key))
					}
					return
				}
				changes = append(changes, c)
				if c.Version.Compare(top) > 0 {
					top = c.Version
				}
				if !c.Delete {
					s.count++
				}
			})
			if tooLong != nil && !o.Repair {
				return &DamageError{Path: r.path, Reason: fmt.Sprintf("write-ahead log record %d: %v (kept by an older ssgen; --repair leaves that key out)", r.seq, tooLong)}
			}
			if err != nil {
				if !o.Repair {
					return &DamageError{Path: r.path, Reason: fmt.Sprintf("write-ahead log record %d: %v", r.seq, err)}
				}
				o.Log.Error("repair: left out of the write-ahead log", "record", r.seq, "err", err)
			}
		}
		s.ckptMeta = &checkpointMeta{applied: lastSeq, top: top}
		err = guarded(s.path, func() error { return s.applyDirect(changes) })
		s.ckptMeta = nil
		if err != nil {
			return err
		}
		s.applied = lastSeq
		if top.Compare(s.floor) > 0 {
			s.floor = top
		}
		o.Log.Info("write-ahead log replayed", "records", len(recs), "changes", len(changes))
	}
	return nil
}

// dropSegments sets the damaged segments replayLog found aside and
// deletes the others it read (numbered up to s.replayed): their records
// are in the file, which no longer names them (putLogSegment).
func (s *Store) dropSegments(o Options) error {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	for _, p := range s.damagedSegs {
		aside := asideName(p, now())
		if err := os.Rename(p, aside); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrStore, p, err)
		}
		o.Log.Error("write-ahead log segment repaired: kept aside", "file", p, "damaged_copy", aside)
	}
	nums, err := logSegments(s.dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrStore, s.dir, err)
	}
	for _, n := range nums {
		if n > s.replayed {
			break
		}
		if err := os.Remove(segmentPath(s.dir, n)); err != nil {
			return fmt.Errorf("%w: %v", ErrStore, err)
		}
	}
	return nil
}

// applyDirect is apply before the file watch exists (at open).
func (s *Store) applyDirect(changes []engine.Change) error {
	return s.db.Update(func(tx *bolt.Tx) error { return s.put(tx, changes) })
}

// checkpointer folds the log's groups into the bbolt file.
type checkpointer struct {
	s   *Store
	log *slog.Logger

	mu      sync.Mutex
	pending map[string]engine.Change // the last change of each key
	top     hlc.HLC
	seq     uint64 // the last sequence number in pending
	bytes   int64  // log bytes since the last checkpoint
	wake    *sync.Cond
	running bool
	closed  bool
	idle    *sync.Cond
	failing bool   // the last checkpoint failed (logged once)
	applied uint64 // the last sequence number checkpointed
}

func newCheckpointer(s *Store, log *slog.Logger) *checkpointer {
	c := &checkpointer{s: s, log: log, pending: map[string]engine.Change{}}
	c.wake = sync.NewCond(&c.mu)
	c.idle = sync.NewCond(&c.mu)
	return c
}

// add takes a group the log has on disk, numbered seq.
func (c *checkpointer) add(changes []queuedChange, seq uint64, size int) {
	c.mu.Lock()
	for _, q := range changes {
		c.pending[q.Key] = q.Change
		if q.Version.Compare(c.top) > 0 {
			c.top = q.Version
		}
	}
	c.seq = seq
	c.bytes += int64(size)
	if c.bytes >= checkpointBytes {
		c.wake.Signal()
	}
	start := !c.running && !c.closed
	c.running = c.running || start
	c.mu.Unlock()
	if start {
		go c.run()
	}
}

// run checkpoints when enough log has grown, or a second after changes
// came, until close.
func (c *checkpointer) run() {
	timer := time.AfterFunc(checkpointEvery, func() {
		c.mu.Lock()
		c.wake.Signal()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	for !c.closed {
		c.wake.Wait()
		if c.closed {
			break
		}
		if len(c.pending) > 0 {
			c.checkpoint()
		}
		timer.Reset(checkpointEvery)
	}
	if len(c.pending) > 0 {
		c.checkpoint()
	}
	c.running = false
	c.idle.Broadcast()
	c.mu.Unlock()
}

// checkpoint writes what is pending. Under mu, which it releases while the
// transaction runs.
func (c *checkpointer) checkpoint() {
	batch, top, seq := c.pending, c.top, c.seq
	c.pending, c.bytes = make(map[string]engine.Change, len(batch)), 0
	c.mu.Unlock()
	changes := make([]engine.Change, 0, len(batch))
	for _, ch := range batch {
		changes = append(changes, ch)
	}
	err := c.s.checkpoint(changes, seq, top)
	if err == nil {
		c.s.wal.retire(seq)
	}
	c.mu.Lock()
	if err != nil {
		// The log still has them: put them back under what came since.
		for k, ch := range batch {
			if _, ok := c.pending[k]; !ok {
				c.pending[k] = ch
			}
		}
		// A lost file is logged once, by the group commit that meets it
		// (every kept write fails from then on).
		var lost *fileLostError
		if !c.failing && !errors.As(err, &lost) {
			c.log.Error("checkpoint of the write-ahead log into the data file failed; the log keeps the changes and grows until one succeeds", "file", c.s.path, "err", err)
		}
		c.failing = true
		return
	}
	c.applied = seq
	if c.failing {
		c.log.Info("checkpoint of the write-ahead log succeeded again", "file", c.s.path)
	}
	c.failing = false
}

// close makes a last checkpoint of everything added and stops.
func (c *checkpointer) close() {
	c.mu.Lock()
	c.closed = true
	c.wake.Broadcast()
	for c.running {
		c.idle.Wait()
	}
	c.mu.Unlock()
}

// checkpoint writes changes (order does not matter: one per key) and the
// applied number seq in one transaction through apply's checks.
func (s *Store) checkpoint(changes []engine.Change, seq uint64, top hlc.HLC) error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	s.ckptMeta = &checkpointMeta{applied: seq, top: top, segment: s.wal.firstNeeded(seq), setSegment: true}
	defer func() { s.ckptMeta = nil }()
	return s.apply(changes)
}

// putCheckpointMeta stores what a checkpoint or replay adds to its
// transaction: the applied number and the floor raised to top.
func (s *Store) putCheckpointMeta(meta *bolt.Bucket) error {
	m := s.ckptMeta
	if m == nil {
		return nil
	}
	top, _ := decodeFloor(meta.Get(metaClock), true)
	if m.top.Compare(top) > 0 {
		if err := meta.Put(metaClock, encodeFloor(m.top)); err != nil {
			return err
		}
	}
	if m.setSegment {
		if err := meta.Put(metaSegment, encodeApplied(m.segment)); err != nil {
			return err
		}
	}
	return meta.Put(metaApplied, encodeApplied(m.applied))
}

// appendLog is applyQueued's path with the write-ahead log: one record,
// one fdatasync.
func (s *Store) appendLog(queued []queuedChange) error {
	if lost := s.lost.Load(); lost != nil {
		return lost
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: closed", ErrStore)
	}
	if lost := s.boltAtPath(); lost != nil {
		return s.lose(lost)
	}
	before := s.wal.off
	err := s.wal.append(queued)
	var lost *fileLostError
	if errors.As(err, &lost) {
		return s.lose(lost)
	}
	if err != nil {
		return fmt.Errorf("%w: write-ahead log: %v", ErrStore, err)
	}
	s.ckpt.add(queued, s.wal.seq, int(max(s.wal.off-before, 0)))
	return nil
}

// isLogMetaKey: keys of the meta bucket the log uses.
func isLogMetaKey(k []byte) bool {
	return bytes.Equal(k, metaStoreID) || bytes.Equal(k, metaApplied) || bytes.Equal(k, metaSegment)
}

// putSalvagedLogMeta keeps a repaired file's store id and log position
// when they check (the log's records after it are then replayed), else
// gives the file a new id (the old log's segments are then refused as
// another store's and, with repair, set aside).
func putSalvagedLogMeta(meta *bolt.Bucket, got map[string][]byte) error {
	id, ok := unsum(got[string(metaStoreID)], 16)
	if !ok {
		fresh, err := newStoreID()
		if err != nil {
			return err
		}
		id = fresh[:]
	} else {
		for _, k := range [][]byte{metaApplied, metaSegment} {
			if v, ok := unsum(got[string(k)], 8); ok {
				if err := meta.Put(k, summed(bytes.Clone(v))); err != nil {
					return err
				}
			}
		}
	}
	return meta.Put(metaStoreID, summed(bytes.Clone(id)))
}

// intact reports whether the open bbolt file still holds what the last
// checkpoint left (its size and both meta pages), wherever its name is.
func (s *Store) intact() bool {
	if s.wedged {
		return false
	}
	fi, err := s.file.Stat()
	if err != nil || fi.Size() != s.watch.size {
		return false
	}
	var buf [boltMetaEnd]byte
	for id := range s.watch.meta {
		if _, err := s.file.ReadAt(buf[:], int64(id)*s.watch.pageSize); err != nil || buf != s.watch.meta[id] {
			return false
		}
	}
	return true
}

// closeLog stops the checkpointer after a last checkpoint and closes the
// log; when everything it wrote is in the file, its segments are removed.
func (s *Store) closeLog() {
	if s.wal == nil {
		return
	}
	s.closed.Store(true)
	s.ckpt.close()
	_ = s.wal.close()
	s.ckpt.mu.Lock()
	all := s.ckpt.applied == s.wal.seq && len(s.ckpt.pending) == 0
	if !all && s.lost.Load() != nil && s.intact() {
		// The path no longer names the file (moved, deleted, replaced),
		// but the open file is as the last checkpoint left it: the
		// changes the log acknowledged since go into it, where the
		// loss's error said they are, and the log, whose records a
		// restart would refuse against whatever is at the path now, is
		// removed.
		changes := make([]engine.Change, 0, len(s.ckpt.pending))
		for _, ch := range s.ckpt.pending {
			changes = append(changes, ch)
		}
		s.ckptMeta = &checkpointMeta{applied: s.ckpt.seq, top: s.ckpt.top, setSegment: true} // the log is removed below
		err := guarded(s.path, func() error { return s.applyDirect(changes) })
		s.ckptMeta = nil
		all = err == nil
		if err != nil {
			s.ckpt.log.Error("changes of the write-ahead log not written into the lost data file; the log keeps them", "dir", s.dir, "err", err)
		}
	}
	s.ckpt.mu.Unlock()
	if all && s.lost.Load() == nil && s.putLogSegment(0) != nil {
		all = false // the file still names a segment: keep the log
	}
	if all {
		nums, _ := logSegments(s.dir)
		for _, n := range nums {
			if os.Remove(segmentPath(s.dir, n)) != nil {
				break
			}
		}
	}
}
