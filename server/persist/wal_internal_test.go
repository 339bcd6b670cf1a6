package persist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// Tests of the write-ahead log on the store itself (no server): the
// changes go in as the group commit hands them over (applyQueued).

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

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

func openT(t testing.TB, dir string, o Options) (*Store, error) {
	t.Helper()
	if o.Log == nil {
		o.Log = quiet
	}
	s, err := Open(dir, o)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func mustOpen(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := openT(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var testVersion = hlc.HLC{Wall: 1696374425000, Node: "n"}

// put appends one group of kept SETs (and, for keys starting with "-",
// deletions) as the group commit would, and returns its last version.
func put(t testing.TB, s *Store, keys ...string) hlc.HLC {
	t.Helper()
	var q []queuedChange
	for _, k := range keys {
		testVersion.Counter++
		c := engine.Change{Record: engine.Record{Key: k, Value: []byte("value of " + k), Version: testVersion}}
		if del, ok := strings.CutPrefix(k, "-"); ok {
			c = engine.Change{Record: engine.Record{Key: del, Version: testVersion}, Delete: true}
		}
		q = append(q, queuedChange{uint64(testVersion.Counter), c})
	}
	if err := s.applyQueued(q); err != nil {
		t.Fatal(err)
	}
	return testVersion
}

// keysOf lists the keys of the bbolt file (Records reads it).
func keysOf(t testing.TB, s *Store) string {
	t.Helper()
	recs, _, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, r := range recs {
		ks = append(ks, r.Key)
	}
	return strings.Join(ks, " ")
}

// crashImage copies the data directory as it is on disk while the store
// is open (every acknowledged group was synced, so the copy holds what a
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

func segmentsIn(t testing.TB, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, LogPrefix+"????????"))
	return m
}

// Groups acknowledged with no checkpoint since are all found by a start
// on what the disk held, across segments, deletions included; the start
// folds them into the data file, raises the floor and removes the log.
func TestLogKeepsAcknowledgedWritesWithoutACheckpoint(t *testing.T) {
	noCheckpoints(t)
	smallSegments(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	for i := range 40 {
		put(t, s, fmt.Sprintf("k%02d", i), fmt.Sprintf("j%02d", i))
	}
	put(t, s, "-k03", "-j03", "-j04")
	top := put(t, s, "k05")
	if got := len(segmentsIn(t, dir)); got < 3 {
		t.Fatalf("%d segments, want several", got)
	}
	img := crashImage(t, dir)
	before := segmentsIn(t, img)
	s2 := mustOpen(t, img)
	keys := " " + keysOf(t, s2) + " "
	if got := strings.Count(keys, " ") - 1; got != 77 {
		t.Errorf("%d keys, want 77", got)
	}
	if strings.Contains(keys, " k03 ") || strings.Contains(keys, " j04 ") {
		t.Error("a deleted key came back")
	}
	if s2.Floor() != top {
		t.Errorf("floor %v, want %v", s2.Floor(), top)
	}
	for _, p := range before {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("segment %s left after the replay", p)
		}
	}
}

// A clean close checkpoints everything and leaves no log.
func TestLogCloseLeavesNoLog(t *testing.T) {
	noCheckpoints(t)
	dir := t.TempDir()
	s, err := Open(dir, Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := segmentsIn(t, dir); len(got) != 0 {
		t.Fatalf("segments after close: %q", got)
	}
	if got := keysOf(t, mustOpen(t, dir)); got != "a" {
		t.Fatalf("keys %q", got)
	}
}

// A checkpoint brings the data file up to date and removes the segments
// it made redundant.
func TestLogCheckpointFoldsTheLogIntoTheDataFile(t *testing.T) {
	smallSegments(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	for i := range 30 {
		put(t, s, fmt.Sprintf("k%02d", i), fmt.Sprintf("j%02d", i))
	}
	s.ckpt.mu.Lock()
	s.ckpt.wake.Signal()
	s.ckpt.mu.Unlock()
	testwait.Until(t, 10*time.Second, "a checkpoint", func() bool {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return s.ckpt.applied == s.wal.seq
	})
	if got := strings.Count(keysOf(t, s), " ") + 1; got != 60 {
		t.Fatalf("%d keys in the data file after a checkpoint", got)
	}
	if got := len(segmentsIn(t, dir)); got > 2 { // the current one, and the next made ahead
		t.Fatalf("%d segments after a checkpoint", got)
	}
}

// The bytes a crash leaves after the last record (a record cut short,
// never acknowledged) are accepted; damage before good records is refused
// naming the segment and the way out, and a repair keeps every record
// that checks.
func TestLogTornTailAcceptedDamageRefused(t *testing.T) {
	noCheckpoints(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	put(t, s, "first")
	put(t, s, "second")
	put(t, s, "third")
	img := crashImage(t, dir)
	seg, err := os.ReadFile(segmentsIn(t, img)[0])
	if err != nil {
		t.Fatal(err)
	}
	sc := scanSegment(seg, s.id, false)
	if len(sc.recs) != 3 || sc.bad != "" || sc.torn {
		t.Fatalf("scan: %d records, bad %q, torn %v", len(sc.recs), sc.bad, sc.torn)
	}
	refused := func(t *testing.T, dir, path, says string) {
		t.Helper()
		_, err := openT(t, dir, Options{})
		var damage *DamageError
		if !errors.As(err, &damage) || damage.Path != path || !strings.Contains(err.Error(), says) ||
			!strings.Contains(err.Error(), "--repair") || !errors.Is(err, ErrStore) {
			t.Fatalf("start: %v", err)
		}
	}
	t.Run("torn tail", func(t *testing.T) {
		dir := crashImage(t, img)
		b := bytes.Clone(seg)
		copy(b[sc.end:], []byte{40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) // a header, no payload
		if err := os.WriteFile(segmentsIn(t, dir)[0], b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, mustOpen(t, dir)); got != "first second third" {
			t.Fatalf("keys %q", got)
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
		refused(t, dir, path, "does not check")
		s, err := openT(t, dir, Options{Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, s); got != "second third" {
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
		refused(t, dir, path, "truncated")
	})
	// Cut at the end of a record: what is left checks, but the records
	// after the cut are gone (acknowledged writes): the size the segment
	// was made at tells. --repair keeps the records before the cut.
	t.Run("truncated at a record's end", func(t *testing.T) {
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		end := int64(logHeaderSize)
		for _, r := range sc.recs[:2] {
			end += recHeaderSize + int64(len(r.payload))
		}
		if err := os.Truncate(path, end); err != nil {
			t.Fatal(err)
		}
		refused(t, dir, path, "cut short (truncated)")
		s, err := openT(t, dir, Options{Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, s); got != "first second" {
			t.Fatalf("keys after repair %q", got)
		}
		if asides, _ := filepath.Glob(path + ".damaged-*"); len(asides) != 1 {
			t.Fatalf("damaged copies %q", asides)
		}
	})
	t.Run("extended", func(t *testing.T) {
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("more")); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		refused(t, dir, path, "appended")
	})
	t.Run("foreign segment", func(t *testing.T) {
		other := t.TempDir()
		put(t, mustOpen(t, other), "foreign")
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		b, err := os.ReadFile(segmentsIn(t, other)[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		refused(t, dir, path, "another data file")
		s, err := openT(t, dir, Options{Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, s); got != "" {
			t.Fatalf("keys after repair %q", got)
		}
	})
	t.Run("not a log", func(t *testing.T) {
		dir := crashImage(t, img)
		path := segmentsIn(t, dir)[0]
		if err := os.WriteFile(path, []byte(strings.Repeat("some other file\n", 100)), 0o600); err != nil {
			t.Fatal(err)
		}
		refused(t, dir, path, "not a ssgen write-ahead log")
	})
}

// A segment missing from the log, or a data file older than the log's
// first record, is refused: records would be skipped.
func TestLogWithMissingRecordsIsRefused(t *testing.T) {
	noCheckpoints(t)
	smallSegments(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	for i := range 60 {
		put(t, s, fmt.Sprintf("k%02d", i), fmt.Sprintf("j%02d", i))
	}
	img := crashImage(t, dir)
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
			_, err := openT(t, dir, Options{})
			var damage *DamageError
			if !errors.As(err, &damage) || !strings.Contains(err.Error(), "missing") {
				t.Fatalf("start with the %s segment gone: %v", name, err)
			}
		})
	}
}

// The only segment holding records is deleted (after a crash the log is
// that one, and the next made ahead, empty), or every segment is: the
// data file names the first segment it needs, so the start is refused,
// naming it, rather than serving without the acknowledged writes; with
// --repair it starts without them. After a clean close nothing is needed.
func TestLogWithItsOnlySegmentDeletedIsRefused(t *testing.T) {
	noCheckpoints(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	put(t, s, "first")
	put(t, s, "second")
	img := crashImage(t, dir)
	segs := segmentsIn(t, img)
	for name, gone := range map[string][]string{"the one with records": segs[:1], "all": segs} {
		t.Run(name, func(t *testing.T) {
			dir := crashImage(t, img)
			for _, g := range gone {
				if err := os.Remove(filepath.Join(dir, filepath.Base(g))); err != nil {
					t.Fatal(err)
				}
			}
			_, err := openT(t, dir, Options{})
			var damage *DamageError
			if !errors.As(err, &damage) || damage.Path != filepath.Join(dir, filepath.Base(segs[0])) || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "--repair") {
				t.Fatalf("start with %s gone: %v", name, err)
			}
			r, err := openT(t, dir, Options{Repair: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(t, r); got != "" {
				t.Fatalf("keys after repair %q", got)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			mustOpen(t, dir) // repaired: the file names the new log
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentsIn(t, dir)); n != 0 {
		t.Fatalf("%d segments after a clean close", n)
	}
	if got := keysOf(t, mustOpen(t, dir)); got != "first second" {
		t.Fatalf("keys after a clean close and a start %q", got)
	}
}

// A data directory written by the previous release (format 2, no log:
// testdata/statestore-format2.db, written by that code through a server:
// 53 kept keys, one with a deadline, one binary, one deleted) is upgraded
// in place to format 3 with every record and the clock floor kept; the
// upgraded directory takes log writes and restarts.
func TestFormat2DataDirectoryIsUpgradedInPlace(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/statestore-format2.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StoreFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, n int) {
		t.Helper()
		recs, floor, err := s.Records()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != n {
			t.Errorf("%d records, want %d", len(recs), n)
		}
		byKey := map[string]engine.Record{}
		for _, r := range recs {
			byKey[r.Key] = r
		}
		if r := byKey["plain"]; string(r.Value) != "value one" || r.Version.String() != "001796374425000:00001:StateStore" {
			t.Errorf("plain = %+v", r)
		}
		if r := byKey["ttl"]; string(r.Value) != "expires in 2100" || r.Deadline.IsZero() {
			t.Errorf("ttl = %+v", r)
		}
		if r := byKey["binary\x00key"]; string(r.Value) != "\x00\xff" {
			t.Errorf("binary key = %+v", r)
		}
		if _, ok := byKey["gone"]; ok {
			t.Error("a deleted key came back")
		}
		if floor.Wall != 1796374425000 || floor.Counter < 55 {
			t.Errorf("floor %v", floor)
		}
	}
	check(s, 53)
	err = s.db.View(func(tx *bolt.Tx) error {
		if f := tx.Bucket(bucketMeta).Get(metaFormat); !bytes.Equal(f, formatValue) {
			return fmt.Errorf("format %q after the upgrade", f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "new")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(mustOpen(t, dir), 54)
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
	seg := encodeLogHeader(1, id, 0)
	seg = appendLogRecord(seg, id, 1, group(engine.Change{Record: engine.Record{Key: "k", Value: []byte("v"), Version: v}}))
	seg = appendLogRecord(seg, id, 2, group(engine.Change{Record: engine.Record{Key: "k", Version: v}, Delete: true},
		engine.Change{Record: engine.Record{Key: "ttl", Value: []byte{0}, Version: v, Fence: v, Deadline: time.Unix(0, 1696374485000000000)}}))
	f.Add(append(seg, make([]byte, 64)...))
	f.Add(seg[:len(seg)-3])
	f.Add(encodeLogHeader(1, id, 0))
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

// A group whose sync failed is answered as failed (the group commit undoes
// it) and must not come back: the next group overwrites its bytes, in the
// same segment or, when it moves to the next segment, after zeroing them;
// a start on what the disk holds finds the groups before and after it,
// numbered without a gap, and not it.
func TestLogFailedAppendDoesNotComeBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		next []string // the group after the failed one
	}{
		{"next group in the same segment", []string{"after"}},
		{"next group in the next segment", bigGroup("after", 80)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noCheckpoints(t)
			smallSegments(t)
			dir := t.TempDir()
			s := mustOpen(t, dir)
			put(t, s, "before")
			s.wal.syncFault = func() error { return errors.New("injected fdatasync failure") }
			testVersion.Counter++
			failed := []queuedChange{{uint64(testVersion.Counter), engine.Change{Record: engine.Record{Key: "failed-with-a-long-key-name", Value: bytes.Repeat([]byte("x"), 300), Version: testVersion}}}}
			if err := s.applyQueued(failed); err == nil || !errors.Is(err, ErrStore) {
				t.Fatalf("append with a failed sync: %v", err)
			}
			s.wal.syncFault = nil
			put(t, s, tc.next...)
			got := keysOf(t, mustOpen(t, crashImage(t, dir)))
			if strings.Contains(got, "failed") || !strings.Contains(got, "before") || !strings.Contains(got, "after") {
				t.Fatalf("keys after a start on the crash image: %q", got)
			}
		})
	}
}

// bigGroup is n keys named prefix/i: a group larger than a small segment's
// room left.
func bigGroup(prefix string, n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("%s/%03d", prefix, i))
	}
	return ks
}

// A checkpoint that finishes between the group commit's look at the data
// file and its comparison with what the last checkpoint left must not
// make the file look changed by another writer (it did under load: every
// kept write was refused until a restart). The hook runs a checkpoint
// there whenever one can run; the checkpoint grows the file, so the
// stale look differs in size.
func TestLogCheckpointDuringTheFileCheckIsNotALoss(t *testing.T) {
	noCheckpoints(t)
	s := mustOpen(t, t.TempDir())
	big := func(prefix string) []queuedChange {
		var q []queuedChange
		for i := range 200 {
			testVersion.Counter++
			q = append(q, queuedChange{uint64(testVersion.Counter), engine.Change{Record: engine.Record{
				Key: fmt.Sprintf("%s%03d", prefix, i), Value: make([]byte, 10_000), Version: testVersion}}})
		}
		return q
	}
	if err := s.applyQueued(big("a")); err != nil {
		t.Fatal(err)
	}
	ran := 0
	s.afterBoltStat = func() {
		if !s.ckptMu.TryLock() {
			return // the check holds it: no checkpoint can run now
		}
		s.ckptMu.Unlock()
		s.ckpt.mu.Lock()
		if len(s.ckpt.pending) > 0 {
			s.ckpt.checkpoint()
			ran++
		}
		s.ckpt.mu.Unlock()
	}
	if err := s.applyQueued(big("b")); err != nil {
		t.Fatalf("a kept write after a checkpoint ran during the file check: %v", err)
	}
	s.afterBoltStat = nil
	if s.Lost() {
		t.Fatal("the store counts its data file as lost")
	}
	t.Logf("checkpoints run during the check: %d", ran)
}

// Salvaging a crafted segment, where every offset claims a record of a
// megabyte, checksums at most salvageBudget times the segment (it used to
// checksum a megabyte at every offset: minutes for one segment) and says
// what it did not search.
func TestSalvageOfACraftedSegmentIsBounded(t *testing.T) {
	var id [16]byte
	b := append(encodeLogHeader(1, id, 0), bytes.Repeat([]byte{0, 0, 16, 0}, 1<<20)...)
	s := scanSegment(b, id, true)
	if len(s.recs) != 0 || len(s.skipped) != 1 || !strings.Contains(s.skipped[0], "not searched") {
		t.Fatalf("salvage: %d records, skipped %q", len(s.recs), s.skipped)
	}
}

// A segment whose last record leaves 1 to 3 bytes unused ends there: the
// zeros after it are the log's end, not a record that does not check
// (a kill -9 after the roll to the next segment was then refused as
// damage, and needed --repair).
func TestSegmentEndingAFewBytesBeforeItsEnd(t *testing.T) {
	var id [16]byte
	for slack := range 5 {
		seg := appendLogRecord(encodeLogHeader(1, id, 0), id, 1, []byte("payload"))
		seg = append(seg, make([]byte, slack)...)
		s := scanSegment(seg, id, false)
		if len(s.recs) != 1 || s.torn || s.bad != "" {
			t.Errorf("slack %d: %d records, torn %v, bad %q", slack, len(s.recs), s.torn, s.bad)
		}
	}
}
