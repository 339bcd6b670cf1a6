package persist

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder (it reads
// what is on disk): it never panics, and a record it accepts as checksummed
// encodes back to one it accepts with the same contents.
func FuzzDecodeRecord(f *testing.F) {
	v := hlc.HLC{Wall: 1696374425000, Counter: 3, Node: "node"}
	for _, r := range []engine.Record{
		{Key: "k", Value: []byte("v"), Version: v},
		{Key: "fenced", Value: []byte{}, Version: v, Fence: hlc.HLC{Wall: 1, Node: "lock"}},
		{Key: "ttl", Value: bytes.Repeat([]byte{0xff}, 100), Version: v, Deadline: time.Unix(0, 1696374485000000000)},
		{Key: binaryKey, Value: []byte("\x00"), Version: v},
	} {
		b, err := encodeRecord(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(r.Key), b)
	}
	f.Add([]byte("clock"), encodeFloor(v))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, _ = decodeRecord(key, value, false)
		_, _ = decodeFloor(value, true)
		_, _ = decodeFloor(value, false)
		r, err := decodeRecord(key, value, true)
		if err != nil {
			return
		}
		b, err := encodeRecord(r)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", r, err)
		}
		r2, err := decodeRecord(key, b, true)
		if err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
		if !bytes.Equal(r.Value, r2.Value) || r.Version != r2.Version || r.Fence != r2.Fence || !r.Deadline.Equal(r2.Deadline) {
			t.Fatalf("%+v became %+v", r, r2)
		}
	})
}

// FuzzBoltFileCheck feeds arbitrary files to the meta-page check and to
// repair's page walk, which read bbolt's format themselves: neither
// panics, and the walk reads no page twice nor past the file.
func FuzzBoltFileCheck(f *testing.F) {
	// Seeds: a new data file, and one holding a few kept keys, written
	// the way the server writes them but with 1 KiB pages and cut after
	// the last page in use: small inputs keep the fuzzer fast.
	path := filepath.Join(f.TempDir(), StoreFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: boltMinPageSize})
	if err != nil {
		f.Fatal(err)
	}
	snapshot := func() []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		m0, m1, err0, err1 := readBoltMetas(bytes.NewReader(b), int64(len(b)))
		if err0 != nil || err1 != nil {
			f.Fatal(err0, err1)
		}
		return b[:max(m0.hwm, m1.hwm)*boltMinPageSize]
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(bucketMeta)
		_, _ = tx.CreateBucket(bucketKeys)
		return meta.Put(metaFormat, formatValue)
	})
	if err != nil {
		f.Fatal(err)
	}
	fresh := snapshot()
	v := hlc.HLC{Wall: 1696374425000, Node: "n"}
	for _, k := range []string{"a", "b", binaryKey, "d"} {
		err := db.Update(func(tx *bolt.Tx) error {
			r, err := encodeRecord(engine.Record{Key: k, Value: []byte("value of " + k), Version: v})
			if err != nil {
				return err
			}
			return errors.Join(tx.Bucket(bucketKeys).Put([]byte(k), r), tx.Bucket(bucketMeta).Put(metaClock, encodeFloor(v)))
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		f.Fatal(err)
	}
	kept := snapshot()
	if got := salvage(bytes.NewReader(kept), int64(len(kept))); len(got.recs) != 4 || len(got.skipped) != 0 {
		f.Fatalf("seed file: %d records, skipped %q", len(got.recs), got.skipped)
	}
	// Larger seeds stall Go's fuzzing engine (a few executions in
	// seconds), so the kept file is cut to its first pages; the walk of
	// the whole of it is checked above, and by the damage tests.
	f.Add(fresh)
	f.Add(kept[:4*boltMinPageSize])
	f.Add(kept[:2*boltMinPageSize+boltMetaEnd])
	f.Fuzz(func(t *testing.T, file []byte) {
		size := int64(len(file))
		_, _ = decodeBoltMeta(file, 0)
		_, _ = checkBoltFile(bytes.NewReader(file), size)
		got := salvage(bytes.NewReader(file), size)
		for id := range got.pages {
			if id < 2 || int64(id) >= size/boltMinPageSize {
				t.Fatalf("the walk reached page %d of a %d-byte file", id, size)
			}
		}
	})
}
