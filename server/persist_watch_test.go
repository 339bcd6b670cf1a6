package server

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// SSGEN_TEST_DIRECT runs every test of the package that opens a data
// directory with Options.DirectCommits.
func init() { forceDirect = os.Getenv("SSGEN_TEST_DIRECT") != "" }

// Attacks on the data file of a running server (server/persist/watch.go): it is
// moved away and another put in its place, deleted, or overwritten in
// place, as a restore script, an operator or a backup tool would. Each
// time the next kept write is answered with the persistence error, and so
// is every later one, the cause is logged once, naming the file, nothing
// panics, and a restart serves the file then at the path: no write was
// acknowledged after the file was swapped.

// lockedLog is a log the server writes while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// errorLines returns the ERROR lines logged so far.
func (l *lockedLog) errorLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.b.String()) {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return out
}

// newWatchedNode is a diskNode whose log the test reads.
func newWatchedNode(t *testing.T) (*diskNode, *lockedLog) {
	return newWatchedNodeWith(t, false)
}

// newWatchedNodeWith is newWatchedNode, with DirectCommits when direct.
func newWatchedNodeWith(t *testing.T, direct bool) (*diskNode, *lockedLog) {
	logs := &lockedLog{}
	n := &diskNode{t: t, dir: t.TempDir(), clock: engine.NewFakeClock(time.UnixMilli(1696374425000)),
		log: slog.New(slog.NewTextHandler(logs, nil)), direct: direct}
	n.open()
	t.Cleanup(func() { _ = n.srv.Close() })
	return n, logs
}

// otherDataFile is the bytes of another server's data file, holding the
// kept keys other0 … other<n-1>, written one transaction each with direct
// (DirectCommits), else through the log and its checkpoint at close: what
// the attacks put in place.
func otherDataFile(t *testing.T, n int, direct bool) []byte {
	t.Helper()
	dir := t.TempDir()
	srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Logger: quietLog, DirectCommits: direct})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte("other" + strconv.Itoa(i)), []byte("restored")},
			HasTimestamp: true, Timestamp: "1:0:c"})
		if string(res.Payload) != "+OK\r\n" {
			t.Fatalf("SET: %q", res.Payload)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var persistenceFailure = "-ERR " + protocol.ErrPersistence + "\r\n"

func TestDataFileSwappedWhileRunningStopsKeptWrites(t *testing.T) {
	other := otherDataFile(t, 1, false)
	// Written as the node below writes its file (the same transactions,
	// keys of the same length): its meta pages are the node's.
	twin := otherDataFile(t, 2, false)
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, path string)
		logs   []string // what the error line says, besides the path
		keys   []string // what a restart serves
	}{
		{
			name: "moved away, another file put in its place",
			attack: func(t *testing.T, path string) {
				if err := os.Rename(path, filepath.Join(filepath.Dir(path), "moved.db")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, other, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			logs: []string{"was replaced by another file", "moved.db"},
			keys: []string{"other0"},
		},
		{
			name: "deleted",
			attack: func(t *testing.T, path string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			},
			logs: []string{"was deleted", "(deleted)", "/proc/"},
			keys: nil,
		},
		{
			name: "moved away",
			attack: func(t *testing.T, path string) {
				if err := os.Rename(path, filepath.Join(filepath.Dir(path), "moved.db")); err != nil {
					t.Fatal(err)
				}
			},
			logs: []string{"was moved away or deleted", "moved.db"},
			keys: nil,
		},
		{
			// cp restored.db statestore.db: same inode, other contents.
			name: "overwritten in place",
			attack: func(t *testing.T, path string) {
				before, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, other, 0o600); err != nil {
					t.Fatal(err)
				}
				if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
					t.Fatalf("the overwrite made another file (%v)", err)
				}
			},
			logs: []string{"another writer"},
			keys: []string{"other0"},
		},
		{
			// cp -p twin.db statestore.db: same inode, same size, same
			// meta pages, the source's modification time.
			name: "overwritten in place by a file of the same layout, its time kept",
			attack: func(t *testing.T, path string) {
				if err := os.WriteFile(path, twin, 0o600); err != nil {
					t.Fatal(err)
				}
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			},
			logs: []string{"another writer", "modification time"},
			keys: []string{"other0", "other1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, logs := newWatchedNode(t)
			path := filepath.Join(n.dir, StoreFile)
			n.mustOK(true, "", "SET", "kept", "acknowledged before")
			n.mustOK(true, "", "SET", "doomed", "x")

			tc.attack(t, path)

			// Every kept write from now on fails (a SET, a DEL of a kept
			// key, a SET without the flag over a kept key), memory-only
			// writes do not.
			for _, req := range [][]string{{"SET", "after", "1"}, {"DEL", "doomed"}, {"SET", "after", "2"}} {
				if res := n.do(true, "", req...); string(res.Payload) != persistenceFailure {
					t.Fatalf("%q after the swap: %q, want %q", req, res.Payload, persistenceFailure)
				}
			}
			if res := n.do(false, "", "SET", "kept", "unflagged"); string(res.Payload) != persistenceFailure {
				t.Fatalf("unflagged SET over a kept key: %q", res.Payload)
			}
			n.mustOK(false, "", "SET", "memory", "only")
			if _, ok := n.srv.Engine().Lookup([]byte("after")); ok {
				t.Error("a refused write is in memory")
			}
			if e, _ := n.srv.Engine().Lookup([]byte("kept")); string(e.Value) != "acknowledged before" {
				t.Errorf("kept = %q after a refused write", e.Value)
			}
			if st := n.srv.Stats().Persist; st.Failures != 4 {
				t.Errorf("%d failed transactions, want 4", st.Failures)
			}
			lines := logs.errorLines()
			if len(lines) != 1 {
				t.Fatalf("%d error lines, want 1:\n%s", len(lines), strings.Join(lines, ""))
			}
			for _, want := range append([]string{path, "restart"}, tc.logs...) {
				if !strings.Contains(lines[0], want) {
					t.Errorf("the error line does not say %q:\n%s", want, lines[0])
				}
			}
			if strings.HasPrefix(tc.name, "overwritten in place") {
				if got, _ := os.ReadFile(path); !bytes.Equal(got, other) && !bytes.Equal(got, twin) {
					t.Error("the server wrote into the file put in place")
				}
			}

			if !forceDirect && strings.HasPrefix(tc.name, "overwritten in place") {
				// The log holds writes acknowledged before the overwrite
				// that the file now at the path does not: a restart
				// refuses, naming the log, and a repair sets it aside.
				if err := n.srv.Close(); err != nil {
					t.Fatal(err)
				}
				_, err := New(Options{DataDir: n.dir, Logger: quietLog})
				var damage *DamageError
				if !errors.As(err, &damage) || !strings.HasPrefix(filepath.Base(damage.Path), persist.LogPrefix) || !strings.Contains(err.Error(), "another data file") || !strings.Contains(err.Error(), "--repair") {
					t.Fatalf("restart on the file put in place: %v", err)
				}
				srv, err := New(Options{DataDir: n.dir, Logger: quietLog, Repair: true})
				if err != nil {
					t.Fatal(err)
				}
				n.srv = srv
			} else {
				n.restart()
			}
			if strings.HasPrefix(tc.name, "moved away") {
				// The writes acknowledged before the swap are in the
				// moved file (readable once the server let it go).
				if got := fileKeys(t, filepath.Join(n.dir, "moved.db")); strings.Join(got, " ") != "doomed kept" {
					t.Errorf("the moved file holds %q, want [doomed kept]", got)
				}
			}
			if got := n.srv.Engine().Keys(); strings.Join(got, " ") != strings.Join(tc.keys, " ") {
				t.Fatalf("keys after restart %q, want %q", got, tc.keys)
			}
			n.mustOK(true, "", "SET", "after", "3") // the new file takes writes
		})
	}
}

// fileKeys lists the keys of a data file, read with bbolt.
func fileKeys(t *testing.T, path string) []string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys []string
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("keys")).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// The file is changed while a transaction writes it: truncated (cp
// caught between truncating the file and writing the new contents), where
// bbolt faults reading its map past the new end, or overwritten in place
// with another data file, where bbolt panics ("page already freed"). The
// fault or panic is recovered in the writer's goroutine and answered as
// the persistence error; the server goes on, and closes.
func TestDataFileChangedDuringACommitIsAPersistenceFailure(t *testing.T) {
	other := otherDataFile(t, 3, true)
	for _, tc := range []struct {
		name   string
		change func(path string) error
		log    string // what the error line says
	}{
		// Faults reading its map past the end.
		{"truncated", func(path string) error { return os.Truncate(path, 0) }, "changed under bbolt, which failed writing it"},
		// bbolt reads the other file's pages and writes on top of them;
		// the meta page it did not write is not the one recorded.
		{"overwritten in place", func(path string) error { return os.WriteFile(path, other, 0o600) }, "overwritten by another writer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A group commit writes the bbolt file only with
			// DirectCommits (with the log, checkpoints do).
			n, logs := newWatchedNodeWith(t, true)
			if err := n.srv.Start(); err != nil { // for Ready
				t.Fatal(err)
			}
			if err := n.srv.Ready(); err != nil {
				t.Fatalf("Ready before: %v", err)
			}
			path := filepath.Join(n.dir, StoreFile)
			n.mustOK(true, "", "SET", "kept", "1")
			n.srv.disk.SetInTx(func() {
				n.srv.disk.SetInTx(nil)
				if err := tc.change(path); err != nil {
					t.Error(err)
				}
			})
			if res := n.do(true, "", "SET", "after", "1"); string(res.Payload) != persistenceFailure {
				t.Fatalf("SET during the change: %q", res.Payload)
			}
			if res := n.do(true, "", "SET", "after", "2"); string(res.Payload) != persistenceFailure {
				t.Fatalf("SET after the change: %q", res.Payload)
			}
			n.mustOK(false, "", "SET", "memory", "only")
			lines := logs.errorLines()
			if len(lines) != 1 || !strings.Contains(lines[0], tc.log) || !strings.Contains(lines[0], path) {
				t.Fatalf("error lines:\n%s", strings.Join(lines, ""))
			}
			if err := n.srv.Ready(); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "kept writes are refused") || strings.Contains(err.Error(), path) {
				t.Errorf("Ready: %v, want ErrNotReady saying kept writes are refused, without the path", err)
			}
			if tc.name == "truncated" {
				// The cp finishes.
				if err := os.WriteFile(path, other, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// A restart serves the other file; the refused writes are not
			// in it (bbolt's own pick of the newest meta page is the
			// other file's).
			n.restart()
			if got := n.srv.Engine().Keys(); strings.Join(got, " ") != "other0 other1 other2" {
				t.Fatalf("keys after restart %q, want [other0 other1 other2]", got)
			}
		})
	}
}

// A transaction that fails for a reason of its own (here: the commit
// hook's error, as a full disk would) leaves the watch as it was: the
// next transaction commits.
func TestAnOrdinaryCommitFailureDoesNotStopTheStore(t *testing.T) {
	n, logs := newWatchedNode(t)
	n.mustOK(true, "", "SET", "kept", "1")
	var failures atomic.Int32
	SetCommitHook(n.srv, func() error {
		if failures.Add(1) <= 3 {
			return errors.New("disk full")
		}
		return nil
	})
	for range 3 {
		if res := n.do(true, "", "SET", "kept", "2"); string(res.Payload) != persistenceFailure {
			t.Fatalf("SET: %q", res.Payload)
		}
	}
	n.mustOK(true, "", "SET", "kept", "3")
	// One line for the run of failures (a full disk would log one per
	// write), and one when commits succeed again.
	if lines := logs.errorLines(); len(lines) != 1 || !strings.Contains(lines[0], "disk full") {
		t.Fatalf("error lines:\n%s", strings.Join(lines, ""))
	}
	if !strings.Contains(logs.String(), "failed_transactions=3") {
		t.Fatalf("no line says commits succeed again after 3 failures:\n%s", logs.String())
	}
	n.restart()
	if e, _ := n.srv.Engine().Lookup([]byte("kept")); string(e.Value) != "3" {
		t.Fatalf("kept = %q after restart, want 3", e.Value)
	}
}

// The write-ahead log segment being written is deleted, moved away,
// replaced or truncated while the server runs: the next kept write is
// answered with the persistence error instead of being acknowledged into
// a file a restart would not read, and one error line names the segment.
func TestLogSegmentSwappedWhileRunningStopsKeptWrites(t *testing.T) {
	if forceDirect {
		t.Skip("SSGEN_TEST_DIRECT: no write-ahead log")
	}
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
			if err := os.Truncate(path, 64); err != nil {
				t.Fatal(err)
			}
		}, "was changed by another writer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, logs := newWatchedNode(t)
			n.mustOK(true, "", "SET", "kept", "before")
			segs, _ := filepath.Glob(filepath.Join(n.dir, persist.LogPrefix+"????????"))
			if len(segs) == 0 {
				t.Fatal("no log segment")
			}
			path := segs[0] // the one being written; the next is made ahead
			tc.attack(t, path)
			if res := n.do(true, "", "SET", "after", "1"); string(res.Payload) != persistenceFailure {
				t.Fatalf("kept SET after the change: %q", res.Payload)
			}
			n.mustOK(false, "", "SET", "memory", "only")
			lines := logs.errorLines()
			if len(lines) != 1 || !strings.Contains(lines[0], tc.log) || !strings.Contains(lines[0], path) {
				t.Fatalf("error lines:\n%s", strings.Join(lines, ""))
			}
		})
	}
}
