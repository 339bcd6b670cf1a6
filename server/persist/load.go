package persist

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// A start reads the keys bucket twice: prepare verifies every record
// (verify) before anything is written or served, then RestoreInto reads
// them again into the engine a chunk at a time. The second pass costs a
// decode per record, and saves holding the whole store twice (as records,
// then as the engine's entries) at the peak of the start.

// restoreChunk is how many records RestoreInto hands over at a time.
const restoreChunk = 4096

// recordDecoder decodes records one after another, reusing its msgpack
// decoder and value buffer, and shares the node ids of the versions it
// parses (most are the service's own) instead of keeping one copy per key.
type recordDecoder struct {
	r     bytes.Reader
	dec   *msgpack.Decoder
	sr    storedRecord
	nodes map[string]string

	// What decode read, valid until the next decode.
	version, fence hlc.HLC
}

// maxInternedNodes bounds recordDecoder.nodes: a file with more distinct
// node ids than this keeps one copy of the rest per key.
const maxInternedNodes = 1024

func newRecordDecoder() *recordDecoder {
	d := &recordDecoder{nodes: map[string]string{}}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}

// decode reads the record of key k from v and checks it: it decodes,
// with verify its checksum matches (format 2; format 1 has none), and its
// version and fencing token parse.
func (d *recordDecoder) decode(k, v []byte, verify bool) error {
	d.sr = storedRecord{Value: d.sr.Value[:0]}
	d.r.Reset(v)
	d.dec.ResetReader(&d.r)
	if err := d.dec.Decode(&d.sr); err != nil {
		return err
	}
	sr := &d.sr
	if verify && sr.Sum != recordSum(k, sr.Value, sr.Version, sr.Fence, sr.Deadline) {
		return errChecksum
	}
	var err error
	if d.version, err = hlc.Parse(sr.Version); err != nil {
		return fmt.Errorf("version: %v", err)
	}
	d.fence = hlc.HLC{}
	if sr.Fence != "" {
		if d.fence, err = hlc.Parse(sr.Fence); err != nil {
			return fmt.Errorf("fencing token: %v", err)
		}
	}
	return nil
}

// record is the record decode read, as an engine.Record owning its bytes.
func (d *recordDecoder) record(k []byte) engine.Record {
	r := engine.Record{Key: string(k), Value: bytes.Clone(d.sr.Value), Version: d.version, Fence: d.fence}
	if r.Value == nil {
		r.Value = []byte{}
	}
	r.Version.Node = d.intern(r.Version.Node)
	if !r.Fence.IsZero() {
		r.Fence.Node = d.intern(r.Fence.Node)
	}
	if d.sr.Deadline != 0 {
		r.Deadline = time.Unix(0, d.sr.Deadline)
	}
	return r
}

func (d *recordDecoder) intern(node string) string {
	if n, ok := d.nodes[node]; ok {
		return n
	}
	if len(d.nodes) < maxInternedNodes {
		d.nodes[node] = node
	}
	return node
}

// verify checks the clock floor and every record of a file of the given
// format, keeping nothing but the floor, the number of records (s.count)
// and the records of a format 1 file (for its upgrade). The first record
// that fails is a DamageError naming its key.
func (s *Store) verify(tx *bolt.Tx, format []byte) (hlc.HLC, []engine.Record, error) {
	v2 := !bytes.Equal(format, formatV1) // format 2 and 3 records are summed
	floor, err := decodeFloor(tx.Bucket(bucketMeta).Get(metaClock), v2)
	if err != nil {
		return hlc.HLC{}, nil, &DamageError{Path: s.path, Reason: "stored clock floor: " + err.Error()}
	}
	var v1 []engine.Record
	d := newRecordDecoder()
	err = tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
		if v == nil {
			return &DamageError{Path: s.path, Key: bytes.Clone(k), Reason: "a bucket where a record belongs"}
		}
		if err := d.decode(k, v, v2); err != nil {
			return &DamageError{Path: s.path, Key: bytes.Clone(k), Reason: err.Error()}
		}
		if !v2 {
			v1 = append(v1, d.record(k))
		}
		s.count++
		return nil
	})
	return floor, v1, err
}

// RestoreInto reads the records prepare verified and hands them to
// restore in key order, at most restoreChunk at a time (the slice is
// reused: restore keeps the records, not the slice). It returns how many
// there were.
func (s *Store) RestoreInto(restore func([]engine.Record)) (int, error) {
	chunk := make([]engine.Record, 0, restoreChunk)
	n := 0
	flush := func() {
		restore(chunk)
		clear(chunk)
		chunk = chunk[:0]
	}
	err := guarded(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			d := newRecordDecoder()
			return tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
				if v == nil {
					return &DamageError{Path: s.path, Key: bytes.Clone(k), Reason: "a bucket where a record belongs"}
				}
				if err := d.decode(k, v, true); err != nil {
					return &DamageError{Path: s.path, Key: bytes.Clone(k), Reason: err.Error()}
				}
				chunk = append(chunk, d.record(k))
				n++
				if len(chunk) == restoreChunk {
					flush()
				}
				return nil
			})
		})
	})
	if err == nil && len(chunk) > 0 {
		flush()
	}
	var damage *DamageError
	if err != nil && !errors.As(err, &damage) {
		err = fmt.Errorf("%w: load %s: %v", ErrStore, s.path, err)
	}
	return n, err
}
