package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	// Seeds: a new data file, and one holding a few kept keys.
	dir := f.TempDir()
	srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Logger: quietLog})
	if err != nil {
		f.Fatal(err)
	}
	fresh, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		f.Fatal(err)
	}
	for _, k := range []string{"a", "b", binaryKey} {
		res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte(k), []byte("value of " + k)},
			HasTimestamp: true, Timestamp: "1:0:c"})
		if string(res.Payload) != "+OK\r\n" {
			f.Fatalf("SET: %q", res.Payload)
		}
	}
	if err := srv.Close(); err != nil {
		f.Fatal(err)
	}
	kept, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fresh)
	f.Add(kept)
	f.Add(kept[:len(kept)/2])
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
