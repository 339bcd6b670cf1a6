package server

import (
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

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// diskNode is a server that is never started: the tests drive its engine
// directly, and a restart is Close plus New on the same directory.
type diskNode struct {
	t     *testing.T
	dir   string
	all   bool
	clock *engine.FakeClock
	srv   *Server
	log   *slog.Logger // quietLog unless a test reads the log
	// direct: Options.DirectCommits (a group commit writes the bbolt
	// file itself).
	direct bool
}

func newDiskNode(t *testing.T, all bool) *diskNode {
	n := &diskNode{t: t, dir: t.TempDir(), all: all, clock: engine.NewFakeClock(time.UnixMilli(1696374425000))}
	n.open()
	t.Cleanup(func() { _ = n.srv.Close() })
	return n
}

func (n *diskNode) open() {
	n.t.Helper()
	log := n.log
	if log == nil {
		log = quietLog
	}
	srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: n.dir, PersistAll: n.all, DirectCommits: n.direct, Now: n.clock.Now, Logger: log})
	if err != nil {
		n.t.Fatal(err)
	}
	n.srv = srv
}

func (n *diskNode) restart() {
	n.t.Helper()
	if err := n.srv.Close(); err != nil {
		n.t.Fatal(err)
	}
	n.open()
}

// do runs one request with a __ts at the fake clock's reading.
func (n *diskNode) do(persist bool, ft string, args ...string) engine.Result {
	req := engine.Request{Client: "c", HasTimestamp: true, Persist: persist,
		Timestamp: fmt.Sprintf("%d:0:c", n.clock.Now().UnixMilli())}
	for _, a := range args {
		req.Args = append(req.Args, []byte(a))
	}
	if ft != "" {
		req.FencingToken, req.HasFencingToken = ft, true
	}
	return n.srv.Engine().Handle(req)
}

func (n *diskNode) mustOK(persist bool, ft string, args ...string) hlc.HLC {
	n.t.Helper()
	res := n.do(persist, ft, args...)
	if string(res.Payload) != "+OK\r\n" && string(res.Payload) != ":1\r\n" {
		n.t.Fatalf("%q: %q", args, res.Payload)
	}
	return res.Version
}

func TestPersistenceKeepsValuesVersionsFencesAndDeadlinesAcrossRestart(t *testing.T) {
	n := newDiskNode(t, false)
	ft := fmt.Sprintf("%d:4:lock", n.clock.Now().Add(-time.Second).UnixMilli())
	vTTL := n.mustOK(true, "", "SET", "ttl", "1", "PX", "60000")
	vFenced := n.mustOK(true, ft, "SET", "fenced", "2")
	n.mustOK(false, "", "SET", "volatile", "3")
	n.mustOK(true, "", "SET", "demoted", "old")
	n.mustOK(false, "", "SET", "demoted", "new") // must not come back as "old"
	n.mustOK(true, "", "SET", "deleted", "5")
	last := n.mustOK(false, "", "DEL", "deleted")
	deadline := n.clock.Now().Add(time.Minute)

	n.clock.Advance(10 * time.Second)
	n.restart()
	eng := n.srv.Engine()
	if got := eng.Keys(); len(got) != 2 || got[0] != "fenced" || got[1] != "ttl" {
		t.Fatalf("keys after restart %q, want [fenced ttl]", got)
	}
	e, _ := eng.Lookup([]byte("ttl"))
	if string(e.Value) != "1" || e.Version != vTTL || !e.Deadline.Equal(deadline) {
		t.Fatalf("ttl = %q %v %v, want 1 %v %v", e.Value, e.Version, e.Deadline, vTTL, deadline)
	}
	e, _ = eng.Lookup([]byte("fenced"))
	if string(e.Value) != "2" || e.Version != vFenced || e.FencingToken.String() != mustHLC(t, ft).String() {
		t.Fatalf("fenced = %q %v %v, want 2 %v %s", e.Value, e.Version, e.FencingToken, vFenced, ft)
	}
	if res := n.do(true, "", "SET", "fenced", "x"); string(res.Payload) != "-ERR "+string(engine.ErrFencingTokenRequired)+"\r\n" {
		t.Fatalf("unfenced SET of a restored fenced key: %q", res.Payload)
	}
	if v := n.mustOK(true, "", "SET", "next", "6"); v.Compare(last) <= 0 {
		t.Fatalf("version after restart %v not after %v", v, last)
	}

	// The deadline is absolute: past it the key goes, and a restart does
	// not bring it back.
	n.clock.Advance(time.Minute)
	if _, ok := eng.Lookup([]byte("ttl")); ok {
		t.Fatal("ttl outlived its deadline")
	}
	n.restart()
	if _, ok := n.srv.Engine().Lookup([]byte("ttl")); ok {
		t.Fatal("expired ttl resurrected")
	}
}

func TestPersistenceDropsKeysThatExpiredWhileDown(t *testing.T) {
	n := newDiskNode(t, false)
	n.mustOK(true, "", "SET", "short", "1", "PX", "1000")
	n.mustOK(true, "", "SET", "long", "2", "PX", "100000")
	n.srv.Close()
	n.clock.Advance(5 * time.Second)
	n.open()
	if got := n.srv.Engine().Keys(); len(got) != 1 || got[0] != "long" {
		t.Fatalf("keys %q, want [long]", got)
	}
	// The expired record is gone from the file too, not only skipped.
	recs, _, err := n.srv.disk.Records()
	if err != nil || len(recs) != 1 || recs[0].Key != "long" {
		t.Fatalf("records %+v, %v", recs, err)
	}
}

func TestPersistAllKeepsUnflaggedKeys(t *testing.T) {
	n := newDiskNode(t, true)
	n.mustOK(false, "", "SET", "a", "1")
	n.restart()
	if e, ok := n.srv.Engine().Lookup([]byte("a")); !ok || string(e.Value) != "1" {
		t.Fatalf("a = %q, %v", e.Value, ok)
	}
}

func TestPersistenceWithoutDataDirKeepsNothing(t *testing.T) {
	srv, err := New(Options{Listen: "127.0.0.1:0", Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte("k"), []byte("v")},
		HasTimestamp: true, Timestamp: "1:0:c", Persist: true})
	if string(res.Payload) != "+OK\r\n" || srv.disk != nil {
		t.Fatalf("%q, disk %v", res.Payload, srv.disk)
	}
}

func TestPersistAllNeedsDataDir(t *testing.T) {
	if _, err := New(Options{PersistAll: true}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New: %v, want ErrInvalidOptions", err)
	}
}

func TestPersistenceRefusesAStoreOfAnotherFormat(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("format"), []byte("99"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Not damage: a later build's file is refused, and not repaired.
	for _, repair := range []bool{false, true} {
		_, err := New(Options{DataDir: dir, Repair: repair, Logger: quietLog})
		if !errors.Is(err, ErrStore) || errors.As(err, new(*DamageError)) || !strings.Contains(err.Error(), "unknown format") {
			t.Fatalf("New (repair %v): %v, want ErrStore for an unknown format", repair, err)
		}
	}
}

func TestPersistenceFailsWhenTheDataDirIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{DataDir: f, Logger: quietLog}); !errors.Is(err, ErrStore) {
		t.Fatalf("New: %v, want ErrStore", err)
	}
}

// A write whose transaction fails is answered with the persistence error
// and leaves the key as it was.
func TestPersistenceFailureIsAnsweredAndChangesNothing(t *testing.T) {
	n := newDiskNode(t, false)
	n.mustOK(true, "", "SET", "k", "old")
	if err := n.srv.disk.Close(); err != nil { // every later transaction fails
		t.Fatal(err)
	}
	res := n.do(true, "", "SET", "k", "new")
	if string(res.Payload) != "-ERR "+string(engine.ErrPersistence)+"\r\n" || !res.Version.IsZero() {
		t.Fatalf("SET with a closed store: %q %v", res.Payload, res.Version)
	}
	if e, _ := n.srv.Engine().Lookup([]byte("k")); string(e.Value) != "old" {
		t.Fatalf("k = %q, want old", e.Value)
	}
}

func mustHLC(t *testing.T, s string) hlc.HLC {
	t.Helper()
	h, err := hlc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestEnvelopePassesTheAioPersistenceFlagToTheEngine(t *testing.T) {
	for _, tc := range []struct {
		props []userProp
		want  bool
	}{
		{[]userProp{{"aio-persistence", "true"}}, true},
		{[]userProp{{"aio-persistence", "True"}}, true},
		{[]userProp{{"aio-persistence", "false"}}, false},
		{[]userProp{{"aio-persistence", ""}}, false},
		{nil, false},
	} {
		j := &recordingJournal{}
		eng := engine.New(engine.Config{Journal: j})
		in := &inbound{QoS: 1, ResponseTopic: "r", CorrelationData: []byte{1}, Client: "c",
			User:    append([]userProp{{protocol.PropTimestamp, "1:0:c"}}, tc.props...),
			Payload: []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")}
		if out := process(eng, in); string(out.Reply.Payload) != "+OK\r\n" {
			t.Fatalf("%v: %q", tc.props, out.Reply.Payload)
		}
		if got := len(j.kept) == 1; got != tc.want {
			t.Errorf("%v: persisted %v, want %v", tc.props, got, tc.want)
		}
	}
}

// recordingJournal keeps what the engine appends and settles nothing.
type recordingJournal struct{ kept []engine.Change }

func (j *recordingJournal) Append(_ uint64, cs []engine.Change) { j.kept = append(j.kept, cs...) }
func (j *recordingJournal) Wait(uint64) error                   { return nil }
