package server

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/internal/testwait"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// SSGEN_TEST_DIRECT runs every test of the package that opens a data
// directory with Options.DirectCommits (the tests of the log itself ask
// for it anyway).
func init() { forceDirect = os.Getenv("SSGEN_TEST_DIRECT") != "" }

// needLog skips a test of the log itself under SSGEN_TEST_DIRECT.
func needLog(t testing.TB) {
	if forceDirect {
		t.Skip("SSGEN_TEST_DIRECT: no write-ahead log")
	}
}

// noCheckpoints keeps everything in the log for the test: what a crash
// before any checkpoint leaves.
func noCheckpoints(t *testing.T) {
	every, size := checkpointEvery, checkpointBytes
	checkpointEvery, checkpointBytes = time.Hour, 1<<62
	t.Cleanup(func() { checkpointEvery, checkpointBytes = every, size })
}

// smallSegments makes each segment hold a few records.
func smallSegments(t *testing.T) {
	old := segmentSize
	segmentSize = 4096
	t.Cleanup(func() { segmentSize = old })
}

// walNode is a server with the write-ahead log on a data directory.
func walNode(t *testing.T) *diskNode {
	t.Helper()
	needLog(t)
	n := &diskNode{t: t, dir: t.TempDir(), clock: engine.NewFakeClock(time.UnixMilli(1696374425000))}
	srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: n.dir, Now: n.clock.Now, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	n.srv = srv
	t.Cleanup(func() { _ = n.srv.Close() })
	return n
}

// crashImage copies the data directory as it is on disk while the server
// runs (every acknowledged write was synced, so the copy holds what a
// kill -9 or a power cut at this instant leaves).
func crashImage(t testing.TB, dir string) string {
	t.Helper()
	to := t.TempDir()
	copyDir(t, dir, to)
	return to
}

// copyDir copies the files of dir (not the temporary ones) into to.
func copyDir(t testing.TB, dir, to string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func openDir(t *testing.T, dir string, repair bool) (*Server, error) {
	t.Helper()
	srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog, Repair: repair,
		Now: engine.NewFakeClock(time.UnixMilli(1696374425000)).Now})
	if err == nil {
		t.Cleanup(func() { _ = srv.Close() })
	}
	return srv, err
}

func segmentsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, LogPrefix+"????????"))
	return m
}

// Writes acknowledged with the log and no checkpoint since are all found
// by a start on what the disk held, and the start folds them into the
// data file and removes the log.
func TestWriteAheadLogKeepsAcknowledgedWritesWithoutACheckpoint(t *testing.T) {
	noCheckpoints(t)
	smallSegments(t)
	n := walNode(t)
	for i := range 40 {
		n.mustOK(true, "", "SET", fmt.Sprintf("k%02d", i), strings.Repeat("v", i*10))
	}
	n.mustOK(true, "", "DEL", "k03")
	v := n.mustOK(true, "", "SET", "k05", "last")
	if got := len(segmentsIn(t, n.dir)); got < 2 {
		t.Fatalf("%d segments, want several", got)
	}
	img := crashImage(t, n.dir)
	before := segmentsIn(t, img)
	srv, err := openDir(t, img, false)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Engine().Len() != 39 {
		t.Errorf("%d keys, want 39", srv.Engine().Len())
	}
	if _, ok := srv.Engine().Lookup([]byte("k03")); ok {
		t.Error("a deleted key came back")
	}
	if e, ok := srv.Engine().Lookup([]byte("k05")); !ok || string(e.Value) != "last" || e.Version != v {
		t.Errorf("k05 = %+v", e)
	}
	for _, p := range before {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("segment %s left after the replay", p)
		}
	}
	// The log's top version is the floor: the next version sorts after.
	res := keptSet(t, srv, 1696374425000, "x")
	if res.Version.Compare(v) <= 0 {
		t.Errorf("version after the replay %v, not after %v", res.Version, v)
	}
}

// A clean close checkpoints everything and leaves no log.
func TestWriteAheadLogCloseLeavesNoLog(t *testing.T) {
	noCheckpoints(t)
	n := walNode(t)
	n.mustOK(true, "", "SET", "a", "1")
	if err := n.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if got := segmentsIn(t, n.dir); len(got) != 0 {
		t.Fatalf("segments after close: %q", got)
	}
	srv, err := openDir(t, n.dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := srv.Engine().Lookup([]byte("a")); !ok || string(e.Value) != "1" {
		t.Fatalf("a = %+v, %v", e, ok)
	}
}

// A checkpoint brings the data file up to date and removes the segments
// it made redundant.
func TestWriteAheadLogCheckpointFoldsTheLogIntoTheDataFile(t *testing.T) {
	smallSegments(t)
	n := walNode(t)
	for i := range 30 {
		n.mustOK(true, "", "SET", fmt.Sprintf("k%02d", i), strings.Repeat("v", 200))
	}
	n.srv.disk.ckpt.mu.Lock()
	n.srv.disk.ckpt.wake.Signal()
	n.srv.disk.ckpt.mu.Unlock()
	testwait.Until(t, 10*time.Second, "a checkpoint", func() bool {
		n.srv.disk.ckpt.mu.Lock()
		defer n.srv.disk.ckpt.mu.Unlock()
		return n.srv.disk.ckpt.applied == n.srv.disk.wal.seq
	})
	if got := fileKeys(t, crashImage(t, n.dir)+"/"+StoreFile); len(got) != 30 {
		t.Fatalf("%d keys in the data file after a checkpoint", len(got))
	}
	if got := len(segmentsIn(t, n.dir)); got > 2 { // the current one, and the next made ahead
		t.Fatalf("%d segments after a checkpoint", got)
	}
}

// The bytes a crash leaves after the last record (a record cut short,
// never acknowledged) are accepted; damage before good records is refused
// naming the segment and the way out, and a repair keeps every record
// that checks.
func TestWriteAheadLogTornTailAcceptedDamageRefused(t *testing.T) {
	noCheckpoints(t)
	n := walNode(t)
	n.mustOK(true, "", "SET", "first", "1")
	n.mustOK(true, "", "SET", "second", "2")
	n.mustOK(true, "", "SET", "third", "3")
	img := crashImage(t, n.dir)
	segs := segmentsIn(t, img)
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	seg, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	s := scanSegment(seg, n.srv.disk.id, false)
	if len(s.recs) != 3 || s.bad != "" || s.torn {
		t.Fatalf("scan: %d records, bad %q, torn %v", len(s.recs), s.bad, s.torn)
	}

	t.Run("torn tail", func(t *testing.T) {
		dir := crashImage(t, img)
		b := bytes.Clone(seg)
		copy(b[s.end:], []byte{40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) // a header, no payload
		if err := os.WriteFile(segmentsIn(t, dir)[0], b, 0o600); err != nil {
			t.Fatal(err)
		}
		srv, err := openDir(t, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if srv.Engine().Len() != 3 {
			t.Fatalf("%d keys", srv.Engine().Len())
		}
	})
	t.Run("damage before good records", func(t *testing.T) {
		dir := crashImage(t, img)
		b := bytes.Clone(seg)
		b[logHeaderSize+recHeaderSize+3] ^= 0x40 // inside the first record's payload
		path := segmentsIn(t, dir)[0]
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := openDir(t, dir, false)
		var damage *DamageError
		if !errors.As(err, &damage) || damage.Path != path || !strings.Contains(err.Error(), "--repair") || !errors.Is(err, ErrStore) {
			t.Fatalf("start on a damaged log: %v", err)
		}
		srv, err := openDir(t, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(srv.Engine().Keys(), " "); got != "second third" {
			t.Fatalf("keys after repair %q", got)
		}
		if asides, _ := filepath.Glob(path + ".damaged-*"); len(asides) != 1 {
			t.Fatalf("damaged copies %q", asides)
		}
	})
	t.Run("truncated segment", func(t *testing.T) {
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		if err := os.Truncate(path, 20); err != nil {
			t.Fatal(err)
		}
		_, err := openDir(t, dir, false)
		var damage *DamageError
		if !errors.As(err, &damage) || damage.Path != path || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("start on a truncated segment: %v", err)
		}
	})
	t.Run("foreign segment", func(t *testing.T) {
		other := walNode(t)
		other.mustOK(true, "", "SET", "foreign", "x")
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		b, err := os.ReadFile(segmentsIn(t, other.dir)[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = openDir(t, dir, false)
		var damage *DamageError
		if !errors.As(err, &damage) || damage.Path != path || !strings.Contains(err.Error(), "another data file") {
			t.Fatalf("start on another store's segment: %v", err)
		}
		srv, err := openDir(t, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		if srv.Engine().Len() != 0 {
			t.Fatalf("keys after repair %q", srv.Engine().Keys())
		}
	})
	t.Run("not a log", func(t *testing.T) {
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		if err := os.WriteFile(path, []byte(strings.Repeat("some other file\n", 100)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := openDir(t, dir, false)
		var damage *DamageError
		if !errors.As(err, &damage) || damage.Path != path || !strings.Contains(err.Error(), "not a ssgen write-ahead log") {
			t.Fatalf("start on a foreign file: %v", err)
		}
	})
}

// A segment missing from the middle of the log, or a data file older
// than the log's first record, is refused: records would be skipped.
func TestWriteAheadLogWithMissingRecordsIsRefused(t *testing.T) {
	noCheckpoints(t)
	smallSegments(t)
	n := walNode(t)
	for i := range 60 {
		n.mustOK(true, "", "SET", fmt.Sprintf("k%02d", i), strings.Repeat("v", 300))
	}
	img := crashImage(t, n.dir)
	segs := segmentsIn(t, img)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	for name, gone := range map[string]string{"middle": segs[1], "first": segs[0]} {
		t.Run(name, func(t *testing.T) {
			dir := crashImage(t, img)
			if err := os.Remove(filepath.Join(dir, filepath.Base(gone))); err != nil {
				t.Fatal(err)
			}
			_, err := openDir(t, dir, false)
			var damage *DamageError
			if !errors.As(err, &damage) || !strings.Contains(err.Error(), "missing") {
				t.Fatalf("start with %s segment gone: %v", name, err)
			}
		})
	}
}

// A data directory written by the previous release (format 2, no log:
// testdata/statestore-format2.db, written by that code) is upgraded in
// place to format 3 with every key, version, deadline and the clock
// floor kept; the upgraded directory takes log writes and restarts.
func TestFormat2DataDirectoryIsUpgradedInPlace(t *testing.T) {
	needLog(t)
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/statestore-format2.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StoreFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	clock := engine.NewFakeClock(time.UnixMilli(1796374425000))
	open := func() *Server {
		srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: dir, Now: clock.Now, Logger: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := open()
	check := func(srv *Server, keys int) {
		t.Helper()
		if n := srv.Engine().Len(); n != keys {
			t.Errorf("%d keys, want %d", n, keys)
		}
		if e, ok := srv.Engine().Lookup([]byte("plain")); !ok || string(e.Value) != "value one" || e.Version != mustHLC(t, "1796374425000:1:StateStore") {
			t.Errorf("plain = %+v, %v", e, ok)
		}
		if e, ok := srv.Engine().Lookup([]byte("ttl")); !ok || string(e.Value) != "expires in 2100" || e.Deadline.IsZero() {
			t.Errorf("ttl = %+v, %v", e, ok)
		}
		if e, ok := srv.Engine().Lookup([]byte("binary\x00key")); !ok || string(e.Value) != "\x00\xff" {
			t.Errorf("binary key = %+v, %v", e, ok)
		}
		if _, ok := srv.Engine().Lookup([]byte("gone")); ok {
			t.Error("a deleted key came back")
		}
	}
	check(srv, 53)
	err = srv.disk.db.View(func(tx *bolt.Tx) error {
		if f := tx.Bucket(bucketMeta).Get(metaFormat); !bytes.Equal(f, formatValue) {
			return fmt.Errorf("format %q after the upgrade", f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := keptSet(t, srv, 1796374425000, "new")
	if res.Version.Compare(mustHLC(t, "1796374425000:55:StateStore")) <= 0 {
		t.Errorf("version after the upgrade %v does not pass the old floor", res.Version)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv = open()
	defer srv.Close()
	check(srv, 54)
	if _, ok := srv.Engine().Lookup([]byte("new")); !ok {
		t.Error("the write after the upgrade is lost")
	}
}

// keptSet SETs key to "1", kept, with a __ts of ms.
func keptSet(t *testing.T, srv *Server, ms int64, key string) engine.Result {
	t.Helper()
	res := srv.Engine().Handle(engine.Request{Client: "c", HasTimestamp: true, Timestamp: fmt.Sprintf("%d:0:c", ms),
		Args: [][]byte{[]byte("SET"), []byte(key), []byte("1")}, Persist: true})
	if string(res.Payload) != "+OK\r\n" {
		t.Fatalf("SET %s: %q", key, res.Payload)
	}
	return res
}

// The log segment being written is moved away, deleted or replaced while
// the server runs: the next kept write fails with the persistence error
// instead of being acknowledged into a file a restart would not read.
func TestLogSegmentSwappedWhileRunningStopsKeptWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string)
		log    string
	}{
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "was deleted"},
		{"moved away", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".moved"); err != nil {
				t.Fatal(err)
			}
		}, "was moved away or deleted"},
		{"replaced", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path, path+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "was replaced by another file"},
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, logHeaderSize); err != nil {
				t.Fatal(err)
			}
		}, "was changed by another writer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needLog(t)
			noCheckpoints(t)
			logs := &lockedLog{}
			n := &diskNode{t: t, dir: t.TempDir(), clock: engine.NewFakeClock(time.UnixMilli(1696374425000))}
			srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: n.dir, Now: n.clock.Now,
				Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			n.srv = srv
			t.Cleanup(func() { _ = n.srv.Close() })
			n.mustOK(true, "", "SET", "kept", "before")
			path := segmentPath(n.dir, n.srv.disk.wal.num)
			tc.attack(t, path)
			if res := n.do(true, "", "SET", "after", "1"); string(res.Payload) != persistenceFailure {
				t.Fatalf("kept SET after the swap: %q", res.Payload)
			}
			n.mustOK(false, "", "SET", "memory", "only")
			lines := logs.errorLines()
			if len(lines) != 1 || !strings.Contains(lines[0], tc.log) || !strings.Contains(lines[0], path) {
				t.Fatalf("error lines:\n%s", strings.Join(lines, ""))
			}
		})
	}
}

// FuzzLogSegment feeds arbitrary bytes to the segment reader and the
// group decoder (what a start reads from disk): they never panic, a
// strict scan finds at most the records a salvaging one finds, and every
// record found decodes or fails with an error.
func FuzzLogSegment(f *testing.F) {
	id := [16]byte{1, 2, 3}
	v := hlc.HLC{Wall: 1696374425000, Counter: 3, Node: "node"}
	group := func(changes ...engine.Change) []byte {
		var q []queuedChange
		for _, c := range changes {
			q = append(q, queuedChange{1, c})
		}
		b, err := encodeGroup(nil, q)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	seg := encodeLogHeader(1, id)
	seg = appendLogRecord(seg, id, 1, group(engine.Change{Record: engine.Record{Key: "k", Value: []byte("v"), Version: v}}))
	seg = appendLogRecord(seg, id, 2, group(engine.Change{Record: engine.Record{Key: "k", Version: v}, Delete: true},
		engine.Change{Record: engine.Record{Key: "ttl", Value: []byte{0}, Version: v, Fence: v, Deadline: time.Unix(0, 1696374485000000000)}}))
	f.Add(append(seg, make([]byte, 64)...))
	f.Add(seg[:len(seg)-3])
	f.Add(encodeLogHeader(1, id))
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkLogHeader(b, 1, id) != nil {
			return
		}
		strict := scanSegment(b, id, false)
		loose := scanSegment(b, id, true)
		if len(strict.recs) > len(loose.recs) {
			t.Fatalf("strict scan found %d records, salvaging %d", len(strict.recs), len(loose.recs))
		}
		d := newRecordDecoder()
		for _, r := range loose.recs {
			_ = decodeGroup(r.payload, d, func(engine.Change) {})
		}
	})
}
