package persist

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server/engine"
)

// appendUnchecked appends a group to the log as a build without the key
// check did: what a data directory written before it may hold.
func appendUnchecked(t *testing.T, s *Store, keys ...string) {
	t.Helper()
	var q []queuedChange
	for _, k := range keys {
		testVersion.Counter++
		q = append(q, queuedChange{uint64(testVersion.Counter), engine.Change{Record: engine.Record{Key: k, Value: []byte("v"), Version: testVersion}}})
	}
	if err := s.appendLog(q); err != nil {
		t.Fatal(err)
	}
}

// A group that would put a key longer than the data file holds is
// refused before the log has it; the store goes on, and its checkpoints
// go through (a key of exactly MaxKeyBytes is stored).
func TestLogRefusesAKeyTheDataFileCannotHold(t *testing.T) {
	noCheckpoints(t)
	for _, direct := range []bool{false, true} {
		dir := t.TempDir()
		s, err := openT(t, dir, Options{Direct: direct})
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("x", MaxKeyBytes+1)
		q := []queuedChange{{1, engine.Change{Record: engine.Record{Key: "a", Value: []byte("v"), Version: testVersion}}},
			{2, engine.Change{Record: engine.Record{Key: long, Value: []byte("v"), Version: testVersion}}}}
		err = s.applyQueued(q)
		if !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), "32769 bytes, over the 32768") || len(err.Error()) > 1024 {
			t.Fatalf("direct=%v: group with a %d-byte key: %v", direct, len(long), err)
		}
		put(t, s, "b", strings.Repeat("y", MaxKeyBytes), "-"+long)
		if err := s.Close(); err != nil {
			t.Fatalf("direct=%v: close (checkpoint): %v", direct, err)
		}
		s2 := mustOpen(t, dir)
		if got := keysOf(t, s2); got != "b "+strings.Repeat("y", MaxKeyBytes) {
			t.Fatalf("direct=%v: keys %.40q…", direct, got)
		}
	}
}

// A log holding a key too long for the data file (kept by an older
// build) is refused at start, naming the record and the way out; a
// repair leaves that key out, with a report, and keeps every other
// change, of the same group too.
func TestLogRecordOfAKeyTooLongIsRefusedThenRepaired(t *testing.T) {
	noCheckpoints(t)
	dir := t.TempDir()
	s := mustOpen(t, dir)
	put(t, s, "a", "b")
	long := strings.Repeat("k", 40000)
	appendUnchecked(t, s, "c", long, "d")
	put(t, s, "e", "-b")
	img := crashImage(t, dir)

	_, err := openT(t, img, Options{})
	var damage *DamageError
	if !errors.As(err, &damage) {
		t.Fatalf("start on the log: %v, want a DamageError", err)
	}
	msg := err.Error()
	for _, want := range []string{img, "write-ahead log record 2", "is 40000 bytes, over the 32768", "--repair"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if len(msg) > 2048 {
		t.Errorf("error of %d bytes: the key is not cut", len(msg))
	}

	var report bytes.Buffer
	s2, err := openT(t, img, Options{Repair: true, Log: slog.New(slog.NewTextHandler(&report, nil))})
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if got := keysOf(t, s2); got != "a c d e" {
		t.Errorf("keys after the repair %q, want a c d e", got)
	}
	if r := report.String(); !strings.Contains(r, "left out of the write-ahead log") || !strings.Contains(r, "record=2") || !strings.Contains(r, "40000 bytes") {
		t.Errorf("repair report %q", r)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, mustOpen(t, img)); got != "a c d e" {
		t.Errorf("keys after a start without repair %q", got)
	}
}
