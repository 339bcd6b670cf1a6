package server

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// StoreFile is the name of the bbolt database inside Options.DataDir.
const StoreFile = "statestore.db"

// ErrStore wraps every failure to open, read or write the durable store;
// match it with errors.Is.
var ErrStore = errors.New("server: durable store")

// Bucket and meta key names. The format number lets a later layout refuse
// (or migrate) a file written by this one instead of misreading it.
var (
	bucketKeys  = []byte("keys")
	bucketMeta  = []byte("meta")
	metaFormat  = []byte("format")
	metaClock   = []byte("clock")
	formatValue = []byte("1")
)

// storedRecord is a key's value in the keys bucket (the bucket key is the
// state store key). Versions are kept in their wire text, deadlines as
// Unix nanoseconds (0 = none): both survive a restart exactly.
type storedRecord struct {
	Value    []byte `msgpack:"v"`
	Version  string `msgpack:"ver"`
	Fence    string `msgpack:"ft,omitempty"`
	Deadline int64  `msgpack:"dl,omitempty"`
}

// durableStore keeps the engine's durable keys in a bbolt file. Every
// apply is one fsynced bbolt transaction, so a change it accepted survives
// a crash of the process or of the machine.
type durableStore struct {
	db   *bolt.DB
	path string
}

// openStore opens (creating it and dir if needed) the store in dir. A file
// locked by another process fails after a second rather than waiting.
func openStore(dir string) (*durableStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStore, err)
	}
	path := filepath.Join(dir, StoreFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: open %s: locked by another process (is another ssgen serve using this data dir?)", ErrStore, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %v", ErrStore, path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketKeys); err != nil {
			return err
		}
		switch f := meta.Get(metaFormat); {
		case f == nil:
			return meta.Put(metaFormat, formatValue)
		case !bytes.Equal(f, formatValue):
			return fmt.Errorf("unknown format %q (this build reads %q)", f, formatValue)
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrStore, path, err)
	}
	return &durableStore{db: db, path: path}, nil
}

// load returns every stored record and the highest version the store ever
// accepted (deleted keys included).
func (s *durableStore) load() ([]engine.Record, hlc.HLC, error) {
	var recs []engine.Record
	var floor hlc.HLC
	err := s.db.View(func(tx *bolt.Tx) error {
		if c := tx.Bucket(bucketMeta).Get(metaClock); c != nil {
			h, err := hlc.Parse(string(c))
			if err != nil {
				return fmt.Errorf("meta clock %q: %v", c, err)
			}
			floor = h
		}
		return tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(k, v)
			if err != nil {
				return err
			}
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		return nil, hlc.HLC{}, fmt.Errorf("%w: load %s: %v", ErrStore, s.path, err)
	}
	return recs, floor, nil
}

// decodeRecord turns a bucket entry into a Record owning its bytes (bbolt's
// slices are only valid inside the transaction).
func decodeRecord(k, v []byte) (engine.Record, error) {
	var sr storedRecord
	if err := msgpack.Unmarshal(v, &sr); err != nil {
		return engine.Record{}, fmt.Errorf("key %q: %v", k, err)
	}
	r := engine.Record{Key: string(k), Value: bytes.Clone(sr.Value)}
	if r.Value == nil {
		r.Value = []byte{}
	}
	var err error
	if r.Version, err = hlc.Parse(sr.Version); err != nil {
		return r, fmt.Errorf("key %q: version: %v", k, err)
	}
	if sr.Fence != "" {
		if r.Fence, err = hlc.Parse(sr.Fence); err != nil {
			return r, fmt.Errorf("key %q: fencing token: %v", k, err)
		}
	}
	if sr.Deadline != 0 {
		r.Deadline = time.Unix(0, sr.Deadline)
	}
	return r, nil
}

// apply writes changes in one transaction and returns once it is on disk.
// The highest version among them raises the stored clock floor in the same
// transaction, so the floor never lags the records.
func (s *durableStore) apply(changes []engine.Change) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		keys, meta := tx.Bucket(bucketKeys), tx.Bucket(bucketMeta)
		var top hlc.HLC
		if c := meta.Get(metaClock); c != nil {
			top, _ = hlc.Parse(string(c)) // a bad floor is replaced below
		}
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
			return meta.Put(metaClock, []byte(top.String()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	return nil
}

func encodeRecord(r engine.Record) ([]byte, error) {
	sr := storedRecord{Value: r.Value, Version: r.Version.String()}
	if !r.Fence.IsZero() {
		sr.Fence = r.Fence.String()
	}
	if !r.Deadline.IsZero() {
		sr.Deadline = r.Deadline.UnixNano()
	}
	return msgpack.Marshal(&sr)
}

// deleteKeys removes records (the ones Restore found expired).
func (s *durableStore) deleteKeys(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	changes := make([]engine.Change, len(keys))
	for i, k := range keys {
		changes[i] = engine.Change{Record: engine.Record{Key: k}, Delete: true}
	}
	return s.apply(changes)
}

func (s *durableStore) close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("%w: close: %v", ErrStore, err)
	}
	return nil
}
