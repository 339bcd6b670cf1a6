package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// heldJournal is a Config.Journal that settles nothing by itself: the
// test decides with Durable and Abandon, and Decide shows what waits.
type heldJournal struct {
	seqs    []uint64
	changes [][]Change
}

func (j *heldJournal) Append(seq uint64, cs []Change) {
	j.seqs = append(j.seqs, seq)
	j.changes = append(j.changes, append([]Change(nil), cs...))
}

func (j *heldJournal) Wait(uint64) error { panic("Wait: the test decides with Decide only") }

func newHeldHarness(t *testing.T, all bool) (*harness, *heldJournal) {
	j := &heldJournal{}
	return newHarness(t, Config{Journal: j, PersistAll: all}), j
}

// decide runs s with Decide (and the persistence flag when persist).
func (h *harness) decide(s step, persist bool) Result {
	h.t.Helper()
	req := h.request(s)
	req.Persist = persist
	return h.eng.Decide(req)
}

// snapshot is everything observable of the store's keys.
type snapshot struct {
	keys    []string
	entries map[string]Entry
	bytes   int64
}

func (h *harness) snapshot() snapshot {
	s := snapshot{keys: h.eng.Keys(), entries: map[string]Entry{}, bytes: h.eng.Bytes()}
	for _, k := range s.keys {
		s.entries[k], _ = h.eng.Lookup([]byte(k))
	}
	return s
}

// An answer waits exactly for the pending change it reveals: its own,
// or one of its key's; a SCAN for any pending key; nothing else waits.
func TestDecideWaitsOnlyForPendingChanges(t *testing.T) {
	h, j := newHeldHarness(t, false)
	h.eng.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("a")}, Client: "W"})
	h.eng.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("v")}, Client: "W"})
	for _, tc := range []struct {
		args    string
		persist bool
		want    uint64
	}{
		{"SET a 1", true, 1},      // its own change
		{"GET a", false, 1},       // sees it
		{"SET a 1 NX", false, 1},  // ":-1" reveals it
		{"GET b", false, 0},       // another key
		{"SET v 1", false, 0},     // a memory-only key: never waits
		{"KEYNOTIFY a", false, 0}, // reveals nothing
		{"SCAN *", false, 1},      // lists it
		{"SET a 2", true, 2},      // its own, later change
		{"GET a", false, 2},
	} {
		res := h.decide(step{args: args(tc.args)}, tc.persist)
		if res.Wait != tc.want {
			t.Errorf("%s: Wait %d, want %d", tc.args, res.Wait, tc.want)
		}
	}
	if !reflect.DeepEqual(j.seqs, []uint64{1, 2}) {
		t.Fatalf("journal entries %v, want [1 2]", j.seqs)
	}
	for _, n := range h.takeNotes() {
		want := uint64(0)
		if string(n.Key) == "a" {
			want = map[string]uint64{"1": 1, "2": 2}[strings.TrimSuffix(string(n.Payload)[len(n.Payload)-3:], "\r\n")]
		}
		if n.Wait != want {
			t.Errorf("notification of %s: Wait %d, want %d", n.Key, n.Wait, want)
		}
	}

	h.eng.Durable(1)
	if res := h.decide(step{args: args("GET a")}, false); res.Wait != 2 {
		t.Fatalf("GET a after Durable(1): Wait %d, want 2", res.Wait)
	}
	h.eng.Durable(2)
	for _, a := range []string{"GET a", "SCAN *", "SET a 3"} {
		if res := h.decide(step{args: args(a)}, false); res.Wait != 3*btoi(a == "SET a 3") {
			t.Fatalf("%s after Durable(2): Wait %d", a, res.Wait)
		}
	}
}

func btoi(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Abandon puts every key back as it was before the abandoned change,
// undoing what was decided on top of it (memory-only writes of its key
// included) but not writes to keys that had nothing pending.
func TestAbandonUndoesTheChangeAndEverythingOnTopOfIt(t *testing.T) {
	h, j := newHeldHarness(t, false)
	ft := tsAt(-time.Second, 1, "lock")
	h.decide(step{args: args("SET fenced v0 PX 60000"), ft: ft}, true)
	h.decide(step{args: args("SET gone v0")}, true)
	h.decide(step{args: args("SET plain v0")}, false)
	h.eng.Durable(2)
	before := h.snapshot()
	h.takeNotes()

	first := j.seqs[len(j.seqs)-1] + 1
	steps := []struct {
		args    string
		ft      string
		persist bool
	}{
		{"SET fenced v1 PX 1000", ft, true}, // kept, new deadline
		{"SET fenced v2", ft, false},        // drops the record: a journal entry too
		{"DEL gone", "", false},             // deletes a kept key
		{"SET gone v3", "", false},          // memory-only, on top of the pending DEL
		{"SET new v4", "", true},            // a new kept key
		{"VDEL new v4", "", false},
	}
	for _, s := range steps {
		h.decide(step{args: args(s.args), ft: s.ft}, s.persist)
	}
	// Not on a pending key: stays whatever happens to the journal.
	h.decide(step{args: args("SET plain v5")}, false)

	last := h.eng.Abandon(first)
	if last != j.seqs[len(j.seqs)-1] {
		t.Fatalf("Abandon returned %d, want the last entry %d", last, j.seqs[len(j.seqs)-1])
	}
	want := before
	want.entries = map[string]Entry{}
	for k, e := range before.entries {
		want.entries[k] = e
	}
	plain, _ := h.eng.Lookup([]byte("plain"))
	want.entries["plain"] = plain
	want.bytes += int64(len("v5") - len("v0"))
	if got := h.snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Abandon:\n got %+v\nwant %+v", got, want)
	}
	if string(plain.Value) != "v5" {
		t.Fatalf("plain = %q, want v5 (nothing was pending on it)", plain.Value)
	}
	// Nothing is pending any more, the old deadline is back in the heap,
	// and the fence still guards the key.
	if res := h.decide(step{args: args("GET fenced")}, false); res.Wait != 0 {
		t.Fatalf("GET after Abandon waits for %d", res.Wait)
	}
	h.run(step{args: args("SET fenced x"), want: errp(ErrFencingTokenRequired)})
	h.clock.Advance(61 * time.Second)
	if _, ok := h.eng.Lookup([]byte("fenced")); ok {
		t.Fatal("the restored deadline did not expire the key")
	}
}

// Abandon leaves the changes of earlier transactions, durable or about
// to be, alone.
func TestAbandonKeepsEarlierChanges(t *testing.T) {
	h, j := newHeldHarness(t, false)
	h.decide(step{args: args("SET k 1")}, true)
	h.decide(step{args: args("SET k 2")}, true)
	h.decide(step{args: args("SET other 1")}, true)
	if last := h.eng.Abandon(2); last != 3 {
		t.Fatalf("Abandon(2) = %d, want 3", last)
	}
	if e, _ := h.eng.Lookup([]byte("k")); string(e.Value) != "1" {
		t.Fatalf("k = %q, want 1 (its first change was not abandoned)", e.Value)
	}
	if _, ok := h.eng.Lookup([]byte("other")); ok {
		t.Fatal("other survived the abandon")
	}
	if res := h.decide(step{args: args("GET k")}, false); res.Wait != 1 {
		t.Fatalf("GET k waits for %d, want 1 (still pending)", res.Wait)
	}
	h.eng.Durable(1)
	if res := h.decide(step{args: args("GET k")}, false); res.Wait != 0 {
		t.Fatalf("GET k waits for %d after Durable(1)", res.Wait)
	}
	_ = j
}

// An expiry is final, unless it expired a change that is then abandoned.
func TestExpiryIsUndoneOnlyWithThePendingChangeItExpired(t *testing.T) {
	h, _ := newHeldHarness(t, false)
	h.decide(step{args: args("SET settled 1 PX 100")}, true)
	h.eng.Durable(1)
	h.decide(step{args: args("SET pending 1")}, true) // 2
	h.eng.Durable(2)
	h.decide(step{args: args("SET pending 2 PX 100")}, true) // 3, pending
	h.clock.Advance(time.Second)
	h.eng.Expire() // expires both; their deletions are entry 4
	for _, n := range h.takeNotes() {
		t.Errorf("unexpected notification %+v", n)
	}
	h.eng.Abandon(3)
	if _, ok := h.eng.Lookup([]byte("settled")); ok {
		t.Fatal("the settled key's expiry was undone")
	}
	if e, ok := h.eng.Lookup([]byte("pending")); !ok || string(e.Value) != "1" || !e.Deadline.IsZero() {
		t.Fatalf("pending = %+v, %v; want its durable value 1 without deadline", e, ok)
	}
}

// The notification of an expiry waits for the pending change it expires.
func TestExpiryNotificationWaitsForThePendingChange(t *testing.T) {
	h, _ := newHeldHarness(t, false)
	h.eng.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("k")}, Client: "W"})
	h.eng.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("s")}, Client: "W"})
	h.decide(step{args: args("SET s 1 PX 100")}, true)
	h.eng.Durable(1)
	h.decide(step{args: args("SET k 1 PX 100")}, true)
	h.takeNotes()
	h.clock.Advance(time.Second)
	h.eng.Expire()
	got := map[string]uint64{}
	for _, n := range h.takeNotes() {
		got[string(n.Key)] = n.Wait
	}
	if want := map[string]uint64{"k": 2, "s": 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("expiry notifications wait for %v, want %v", got, want)
	}
}

// The engine decides with a journal exactly as it does when every change
// is durable before the next request: same payloads, same versions. Many
// random sequences of requests over a few keys, with and without the
// persistence flag, including conditions, fences, TTLs, deletions and
// expiries, run on two engines on the same fake clock; one settles each
// change before the next request (Handle with a journal that settles at
// once), the other settles nothing (Decide, never Durable).
func TestDecisionsDoNotDependOnWhenChangesSettle(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			sync, _ := newPersistHarness(t, false)
			held, _ := newHeldHarness(t, false)
			rnd := rand.New(rand.NewPCG(seed, 1))
			keys := []string{"a", "b", "c"}
			for i := range 300 {
				key := keys[rnd.IntN(len(keys))]
				var a string
				switch rnd.IntN(9) {
				case 0, 1:
					a = fmt.Sprintf("SET %s v%d", key, rnd.IntN(3))
				case 2:
					a = fmt.Sprintf("SET %s v%d NX", key, rnd.IntN(3))
				case 3:
					a = fmt.Sprintf("SET %s v%d NEX PX %d", key, rnd.IntN(3), 1+rnd.IntN(50))
				case 4:
					a = "DEL " + key
				case 5:
					a = fmt.Sprintf("VDEL %s v%d", key, rnd.IntN(3))
				case 6:
					a = "GET " + key
				case 7:
					a = "SCAN *"
				default:
					a = fmt.Sprintf("SET %s f PX %d", key, 1+rnd.IntN(50))
				}
				s := step{args: args(a)}
				if rnd.IntN(4) == 0 {
					s.ft = tsAt(time.Duration(rnd.IntN(3))*time.Millisecond, 0, "lock")
				}
				persist := rnd.IntN(2) == 0
				req := sync.request(s)
				req.Persist = persist
				want := sync.eng.Handle(req)
				got := held.decide(s, persist)
				if string(got.Payload) != string(want.Payload) || got.Version != want.Version {
					t.Fatalf("request %d %q (persist %v): held journal answers %q %v, settled one %q %v",
						i, a, persist, got.Payload, got.Version, want.Payload, want.Version)
				}
				if d := time.Duration(rnd.IntN(20)) * time.Millisecond; d > 0 {
					sync.clock.Advance(d)
					held.clock.Advance(d)
				}
			}
			if !reflect.DeepEqual(held.snapshot(), sync.snapshot()) {
				t.Fatal("the stores differ at the end")
			}
		})
	}
}

// Registrations reach the journal only with JournalWatches (a replicated
// store); the local store's journal never sees them.
func TestRegistrationsAreJournaledOnlyWithJournalWatches(t *testing.T) {
	for _, watches := range []bool{false, true} {
		j := &heldJournal{}
		h := newHarness(t, Config{Journal: j, PersistAll: true, JournalWatches: watches})
		reg := h.decide(step{client: "W", args: []string{"KEYNOTIFY", "k"}}, false)
		h.decide(step{client: "W", args: []string{"KEYNOTIFY", "other"}}, false)
		stop := h.decide(step{client: "W", args: []string{"KEYNOTIFY", "other", "STOP"}}, false)
		none := h.decide(step{client: "W", args: []string{"KEYNOTIFY", "never", "STOP"}}, false)
		h.eng.DropClient("W")
		h.eng.DropClient("W") // nothing left: not journaled again
		if !watches {
			if len(j.changes) != 0 || reg.Wait != 0 || stop.Wait != 0 {
				t.Fatalf("without JournalWatches: journal got %+v, waits %d %d", j.changes, reg.Wait, stop.Wait)
			}
			continue
		}
		want := []Change{
			{Record: Record{Key: "k"}, Watch: "W"},
			{Record: Record{Key: "other"}, Watch: "W"},
			{Record: Record{Key: "other"}, Watch: "W", Delete: true},
			{Watch: "W", Delete: true},
		}
		var got []Change
		for _, cs := range j.changes {
			got = append(got, cs...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("journal got %+v, want %+v", got, want)
		}
		if reg.Wait == 0 || stop.Wait == 0 || none.Wait != 0 {
			t.Fatalf("waits: register %d, stop %d, stop of nothing %d", reg.Wait, stop.Wait, none.Wait)
		}
		// A request decided after DropClient waits for nothing of it.
		if r := h.decide(step{client: "X", args: []string{"GET", "k"}}, false); r.Wait != 0 {
			t.Fatalf("GET after DropClient waits for %d", r.Wait)
		}
	}
}
