package persist_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// damageKeys is how many kept keys the damage tests write: enough for a
// keys bucket of several leaf pages under a branch page.
const damageKeys = 300

// A key with bytes that are not printable, to check the error names it in
// hex.
const binaryKey = "bin\x00\xff"

// keptFile is a data file written through a server, and what it holds.
type keptFile struct {
	bytes    []byte
	pageSize int64
	values   map[string]string // key -> value
	versions map[string]hlc.HLC
	last     string // written by the file's newest transaction
	// page is the live leaf page holding each key.
	page map[string]uint64
	// branches are the live pages that are not leaves.
	branches []uint64
}

// writeKeptFile makes a data file the ordinary way (a server, one
// transaction per SET) and returns it, with where each key lives.
func writeKeptFile(t testing.TB) *keptFile {
	t.Helper()
	dir := t.TempDir()
	clock := engine.NewFakeClock(time.UnixMilli(1696374425000))
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Now: clock.Now, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	kf := &keptFile{values: map[string]string{}, versions: map[string]hlc.HLC{}, page: map[string]uint64{}}
	set := func(k, v string) {
		res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte(k), []byte(v)},
			HasTimestamp: true, Timestamp: fmt.Sprintf("%d:0:c", clock.Now().UnixMilli())})
		if string(res.Payload) != "+OK\r\n" {
			t.Fatalf("SET %q: %q", k, res.Payload)
		}
		kf.values[k], kf.versions[k], kf.last = v, res.Version, k
	}
	for i := range damageKeys {
		set(fmt.Sprintf("key/%03d", i), fmt.Sprintf("value-%03d-%s", i, strings.Repeat("x", 40)))
	}
	set(binaryKey, "binary-key-value-0123456789")
	set("last", "written-last-0123456789")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	kf.bytes, err = os.ReadFile(filepath.Join(dir, server.StoreFile))
	if err != nil {
		t.Fatal(err)
	}

	// Where each value lives: freed pages keep stale copies, so only
	// the pages a walk of the sound file reaches count.
	recs, skipped, pages := persist.Salvage(kf.bytes)
	if len(skipped) > 0 || recs != len(kf.values) {
		t.Fatalf("salvage of a sound file: %d records, skipped %q", recs, skipped)
	}
	kf.pageSize, err = persist.PageSize(kf.bytes)
	if err != nil {
		t.Fatal(err)
	}
	for id := range pages {
		leaf, overflow := persist.Page(kf.bytes[int64(id)*kf.pageSize:])
		if !leaf {
			kf.branches = append(kf.branches, id)
			continue
		}
		pg := kf.bytes[int64(id)*kf.pageSize : int64(id+1+uint64(overflow))*kf.pageSize]
		for k, v := range kf.values {
			if bytes.Contains(pg, []byte(v)) {
				kf.page[k] = id
			}
		}
	}
	if len(kf.page) != len(kf.values) || len(kf.branches) == 0 {
		t.Fatalf("found %d of %d keys on live pages, %d branch pages: want a tree of several pages", len(kf.page), len(kf.values), len(kf.branches))
	}
	return kf
}

// valueAt is where key's value starts in the file, on its live page.
func (kf *keptFile) valueAt(t *testing.T, key string) int64 {
	start := int64(kf.page[key]) * kf.pageSize
	i := bytes.Index(kf.bytes[start:], []byte(kf.values[key]))
	if i < 0 {
		t.Fatalf("value of %q not found on page %d", key, kf.page[key])
	}
	return start + int64(i)
}

// textLogger logs as text into w, safely from any goroutine.
func textLogger(w *strings.Builder) *slog.Logger {
	var mu sync.Mutex
	return slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return w.Write(p)
	}), nil))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// install writes data as the data file of a new directory.
func installDataFile(t *testing.T, data []byte) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, server.StoreFile)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// A data file damaged in each of the ways that used to panic, roll back
// silently or serve flipped bytes fails New with a one-line *server.DamageError
// naming the file and the repair; with Repair the server starts, serves
// every key the damage did not touch, and keeps the damaged file aside.
func TestDamagedDataFileFailsLoudlyAndRepairSalvagesTheRest(t *testing.T) {
	kf := writeKeptFile(t)
	victim := fmt.Sprintf("key/%03d", damageKeys/2)
	ps := kf.pageSize
	onPage := func(id uint64) map[string]bool {
		lost := map[string]bool{}
		for k, p := range kf.page {
			if p == id {
				lost[k] = true
			}
		}
		return lost
	}
	newestMeta := func(b []byte) int64 {
		tx0, tx1, err0, err1 := persist.MetaTxIDs(bytes.NewReader(b), int64(len(b)))
		if err0 != nil || err1 != nil {
			t.Fatal(err0, err1)
		}
		if tx1 > tx0 {
			return 1
		}
		return 0
	}
	for _, tc := range []struct {
		name    string
		damage  func(b []byte) []byte
		inError string          // besides the file and --repair
		lost    map[string]bool // keys a repair cannot bring back; nil: computed
	}{
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }, "truncated", nil},
		{"page header flipped", func(b []byte) []byte {
			at := int64(kf.page[victim]) * ps
			for i := range 8 { // the page id
				b[at+int64(i)] ^= 0xa5
			}
			return b
		}, "bbolt failed reading it", onPage(kf.page[victim])},
		{"data page zeroed", func(b []byte) []byte {
			at := int64(kf.page[victim]) * ps
			clear(b[at : at+ps])
			return b
		}, "bbolt failed reading it", onPage(kf.page[victim])},
		{"first meta page zeroed", func(b []byte) []byte {
			clear(b[:ps])
			return b
		}, "meta page 0 is invalid", nil},
		{"older meta page zeroed", func(b []byte) []byte {
			// Nothing is lost, but nothing on disk can tell: refused too.
			at := (1 - newestMeta(b)) * ps
			clear(b[at : at+ps])
			return b
		}, "newest committed writes may have been lost", map[string]bool{}},
		{"8 bytes of a value flipped", func(b []byte) []byte {
			at := kf.valueAt(t, victim) + 4
			for i := range 8 {
				b[at+int64(i)] ^= 0xff
			}
			return b
		}, `key "` + victim + `": checksum mismatch`, map[string]bool{victim: true}},
		{"8 bytes of a binary key's value flipped", func(b []byte) []byte {
			at := kf.valueAt(t, binaryKey)
			for i := range 8 {
				b[at+int64(i)] ^= 0x01
			}
			return b
		}, "key 0x62696e00ff: checksum mismatch", map[string]bool{binaryKey: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			damaged := tc.damage(bytes.Clone(kf.bytes))
			dir, path := installDataFile(t, damaged)
			lost := tc.lost
			switch {
			case tc.name == "truncated to half":
				// Keys on pages past the end are lost, and all of them
				// if a branch page is.
				cut := uint64(len(damaged)) / uint64(ps)
				lost = map[string]bool{}
				for k, p := range kf.page {
					if p >= cut {
						lost[k] = true
					}
				}
				for _, b := range kf.branches {
					if b >= cut {
						t.Logf("branch page %d past the cut at %d: every key is lost", b, cut)
						for k := range kf.page {
							lost[k] = true
						}
					}
				}
				if len(lost) == 0 {
					t.Fatalf("the cut at page %d of %d loses nothing: a useless test", cut, len(kf.bytes)/int(ps))
				}
			case lost == nil: // meta page 0 zeroed: lost only if it was the newest
				lost = map[string]bool{}
				if newestMeta(kf.bytes) == 0 {
					lost["last"] = true
				}
			}

			_, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
			var damage *server.DamageError
			if !errors.Is(err, server.ErrStore) || !errors.As(err, &damage) {
				t.Fatalf("New on a damaged file: %v, want a *server.DamageError wrapping server.ErrStore", err)
			}
			msg := err.Error()
			t.Logf("refused: %s", msg)
			for _, want := range []string{path, "ssgen serve --repair", "backup", tc.inError} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error %q is not one line", msg)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
				t.Fatal("a refused start changed the damaged file")
			}

			logs := &strings.Builder{}
			srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Repair: true, Logger: textLogger(logs)})
			if err != nil {
				t.Fatalf("New with Repair: %v", err)
			}
			defer srv.Close()
			eng := srv.Engine()
			for k, v := range kf.values {
				e, ok := eng.Lookup([]byte(k))
				switch {
				case lost[k] && ok:
					t.Errorf("%q served after repair (%q), want it absent", k, e.Value)
				case !lost[k] && !ok:
					t.Errorf("%q lost by the repair", k)
				case ok && (string(e.Value) != v || e.Version != kf.versions[k]):
					t.Errorf("%q = %q %v, want %q %v", k, e.Value, e.Version, v, kf.versions[k])
				}
			}
			if eng.Len() != len(kf.values)-len(lost) {
				t.Errorf("%d keys after repair, want %d", eng.Len(), len(kf.values)-len(lost))
			}
			asides, _ := filepath.Glob(path + ".damaged-*")
			if len(asides) != 1 {
				t.Fatalf("damaged copies %q, want one", asides)
			}
			if kept, _ := os.ReadFile(asides[0]); !bytes.Equal(kept, damaged) {
				t.Fatal("the damaged copy is not the damaged file")
			}
			if !strings.Contains(logs.String(), asides[0]) {
				t.Errorf("the log does not name the damaged copy %s:\n%s", asides[0], logs)
			}
			if strings.Contains(tc.name, "value flipped") {
				for k := range tc.lost {
					if !strings.Contains(logs.String(), strings.Trim(persist.DisplayKey([]byte(k)), `"`)) {
						t.Errorf("the log does not name the key left out, %s:\n%s", persist.DisplayKey([]byte(k)), logs)
					}
				}
			}
			// Versions assigned after the repair sort after every one
			// handed out before the damage.
			res := eng.Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte("after"), []byte("1")}, HasTimestamp: true, Timestamp: "1:0:c", Persist: true})
			if res.Version.Compare(kf.versions[kf.last]) <= 0 && !lost[kf.last] {
				t.Errorf("version after repair %v not after %v", res.Version, kf.versions[kf.last])
			}
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			// The repaired file is sound: a start without Repair loads it.
			srv2, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
			if err != nil {
				t.Fatalf("New after repair: %v", err)
			}
			srv2.Close()
		})
	}
}

func TestRepairLeavesASoundFileAlone(t *testing.T) {
	kf := writeKeptFile(t)
	dir, path := installDataFile(t, kf.bytes)
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Repair: true, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Engine().Len() != len(kf.values) {
		t.Fatalf("%d keys, want %d", srv.Engine().Len(), len(kf.values))
	}
	if asides, _ := filepath.Glob(path + ".damaged-*"); len(asides) != 0 {
		t.Fatalf("a sound file was moved aside: %q", asides)
	}
}

func TestRepairNeedsDataDir(t *testing.T) {
	if _, err := server.New(server.Options{Repair: true, Logger: quietLog}); !errors.Is(err, server.ErrInvalidOptions) {
		t.Fatalf("New: %v, want server.ErrInvalidOptions", err)
	}
}

// A file that is not a bbolt file at all is refused; Repair keeps it
// aside and starts empty, saying so.
func TestRepairOfAnUnreadableFileStartsEmptyAndSaysSo(t *testing.T) {
	dir, path := installDataFile(t, bytes.Repeat([]byte("not a database "), 1000))
	if _, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog}); !errors.As(err, new(*server.DamageError)) {
		t.Fatalf("New: %v, want a *server.DamageError", err)
	}
	logs := &strings.Builder{}
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Repair: true, Logger: textLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	asides, _ := filepath.Glob(path + ".damaged-*")
	if srv.Engine().Len() != 0 || len(asides) != 1 || !strings.Contains(logs.String(), "nothing is readable") {
		t.Fatalf("%d keys, asides %q, log:\n%s", srv.Engine().Len(), asides, logs)
	}
}

// A format 1 file (records without checksums, written by earlier builds)
// is loaded and upgraded in place to format 2.
func TestFormat1FileIsUpgradedInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, server.StoreFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	type v1Record struct { // storedRecord as format 1 wrote it
		Value    []byte `msgpack:"v"`
		Version  string `msgpack:"ver"`
		Fence    string `msgpack:"ft,omitempty"`
		Deadline int64  `msgpack:"dl,omitempty"`
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(persist.BucketMeta)
		keys, _ := tx.CreateBucket(persist.BucketKeys)
		v, _ := msgpack.Marshal(&v1Record{Value: []byte("old"), Version: "1696374425000:0:n", Fence: "1696374424000:1:lock"})
		return errors.Join(meta.Put(persist.MetaFormat, persist.FormatV1), meta.Put(persist.MetaClock, []byte("1696374426000:0:n")), keys.Put([]byte("k"), v))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := srv.Engine().Lookup([]byte("k"))
	if !ok || string(e.Value) != "old" || e.Version != mustHLC(t, "1696374425000:0:n") || e.FencingToken != mustHLC(t, "1696374424000:1:lock") {
		t.Fatalf("k = %+v, %v", e, ok)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Upgraded: format 2, every record and the floor checksummed.
	recs, floor, format, err := persist.ReadBack(path)
	if err != nil || len(recs) != 1 || floor != mustHLC(t, "1696374426000:0:n") {
		t.Fatalf("load after upgrade: %v %v %v", recs, floor, err)
	}
	if !bytes.Equal(format, persist.FormatValue) {
		t.Fatalf("format %q after upgrade", format)
	}
}

// A format 1 record that does not decode is refused like any damage.
func TestFormat1FileWithABadRecordIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, server.StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(persist.BucketMeta)
		keys, _ := tx.CreateBucket(persist.BucketKeys)
		return errors.Join(meta.Put(persist.MetaFormat, persist.FormatV1), keys.Put([]byte("k"), []byte{0xc1}))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	_, err = server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
	if d := (*server.DamageError)(nil); !errors.As(err, &d) || string(d.Key) != "k" {
		t.Fatalf("New: %v, want a DamageError for key k", err)
	}
}
