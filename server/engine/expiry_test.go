package engine

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestLazyExpiryOnAccess(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{args: args("SET k v PX 100"), want: ok, wantTS: true})
	h.clock.Advance(99 * time.Millisecond)
	h.run(step{args: args("GET k"), want: bulk("v"), wantTS: true})
	h.clock.Advance(time.Millisecond) // the deadline itself is expired
	h.run(step{args: args("GET k"), want: null})
	h.run(step{args: args("SET k w NX"), want: ok, wantTS: true})
}

func TestExpiredKeyIsAbsentForEveryCommand(t *testing.T) {
	for _, s := range []step{
		{args: args("GET k"), want: null},
		{args: args("DEL k"), want: zero, wantTS: true},
		{args: args("VDEL k v"), want: zero, wantTS: true},
		{args: args("SET k w NX"), want: ok, wantTS: true},
		{args: args("SET k w NEX"), want: ok, wantTS: true},
	} {
		t.Run(s.args[0]+" "+s.args[len(s.args)-1], func(t *testing.T) {
			h := newHarness(t, Config{})
			h.run(step{args: args("SET k v PX 5"), want: ok, wantTS: true})
			h.clock.Advance(time.Second)
			h.run(s)
		})
	}
}

func TestActiveExpiryDeletesDueKeysInDeadlineOrder(t *testing.T) {
	h := newHarness(t, Config{})
	h.do(step{client: "W", args: args("KEYNOTIFY a")})
	h.do(step{client: "W", args: args("KEYNOTIFY b")})
	h.do(step{client: "W", args: args("KEYNOTIFY c")})
	h.run(step{args: args("SET c v PX 300"), want: ok, wantTS: true})
	h.run(step{args: args("SET a v PX 100"), want: ok, wantTS: true})
	h.run(step{args: args("SET b v PX 200"), want: ok, wantTS: true})
	h.run(step{args: args("SET p v"), want: ok, wantTS: true})
	h.takeNotes()

	next, ok := h.eng.Expire()
	if !ok || !next.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("Expire before any deadline: next %v %v", next, ok)
	}
	h.clock.Advance(250 * time.Millisecond)
	next, ok = h.eng.Expire()
	if !ok || !next.Equal(t0.Add(300*time.Millisecond)) {
		t.Fatalf("next %v %v, want t0+300ms", next, ok)
	}
	notes := h.takeNotes()
	if want := []note{{"W", "a", notifyDelete}, {"W", "b", notifyDelete}}; !slices.Equal(notesOf(notes), want) {
		t.Fatalf("expiry notifications %q, want %q", notesOf(notes), want)
	}
	if notes[1].Version.Compare(notes[0].Version) <= 0 || notes[0].Version.Wall != uint64(t0.Add(250*time.Millisecond).UnixMilli()) {
		t.Fatalf("expiry versions %v, %v: want fresh increasing ticks", notes[0].Version, notes[1].Version)
	}
	if got := h.eng.Keys(); !slices.Equal(got, []string{"c", "p"}) {
		t.Fatalf("keys %v", got)
	}
	h.clock.Advance(time.Hour)
	if _, ok := h.eng.Expire(); ok {
		t.Fatal("a deadline remains after every TTL key expired")
	}
	if h.eng.Len() != 1 {
		t.Fatalf("Len %d, want the persistent key only", h.eng.Len())
	}
}

func TestRenewalMovesTheDeadline(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{args: args("SET lock me NEX PX 100"), want: ok, wantTS: true})
	h.clock.Advance(90 * time.Millisecond)
	h.run(step{args: args("SET lock me NEX PX 100"), want: ok, wantTS: true})
	h.clock.Advance(90 * time.Millisecond)
	if next, _ := h.eng.Expire(); !next.Equal(t0.Add(190 * time.Millisecond)) {
		t.Fatalf("next deadline %v", next)
	}
	h.run(step{args: args("GET lock"), want: bulk("me"), wantTS: true})
	h.run(step{args: args("SET lock me PX 1"), want: ok, wantTS: true}) // shorten
	h.clock.Advance(time.Millisecond)
	h.run(step{args: args("GET lock"), want: null})
}

func TestExpiryOfOneKeyAmongManyLeavesTheOthers(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range 50 {
		h.eng.Put([]byte{byte('A' + i)}, []byte("v"), PutOptions{TTL: time.Duration(50-i) * time.Millisecond})
	}
	h.eng.Delete([]byte("A")) // removes from the middle of the heap's life
	h.clock.Advance(10 * time.Millisecond)
	// TTLs 1..10ms are due, "A" (50ms) was deleted: 39 of 50 are left.
	if got := h.eng.Len(); got != 39 {
		t.Fatalf("Len %d after 10ms, want 39", got)
	}
	for _, k := range h.eng.Keys() {
		if e, _ := h.eng.Lookup([]byte(k)); !e.Deadline.After(h.clock.Now()) {
			t.Fatalf("key %q with deadline %v survived", k, e.Deadline)
		}
	}
}

func TestPutAndLookupSeedTheStore(t *testing.T) {
	h := newHarness(t, Config{})
	v := mustParse(t, "1696374425000:7:Seed")
	ft := mustParse(t, "1696374425000:3:Lock")
	if err := h.eng.Put([]byte("k"), []byte("v"), PutOptions{Version: v, FencingToken: ft, TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	e, found := h.eng.Lookup([]byte("k"))
	if !found || string(e.Value) != "v" || e.Version != v || e.FencingToken != ft || !e.Deadline.Equal(t0.Add(time.Second)) {
		t.Fatalf("Lookup %+v %v", e, found)
	}
	res := h.run(step{args: args("SET k w"), ft: ft.String(), want: ok, wantTS: true})
	if res.Version.Compare(v) <= 0 {
		t.Fatalf("SET version %v not above the seeded %v", res.Version, v)
	}
	if err := h.eng.Put(nil, []byte("v"), PutOptions{}); err != ErrKeyLengthZero {
		t.Fatalf("Put empty key: %v", err)
	}
	if !h.eng.Delete([]byte("k")) || h.eng.Delete([]byte("k")) {
		t.Fatal("Delete reported wrongly")
	}
}

// Run must wake for a deadline set after it went to sleep on a later one
// (or on none). Real time: the test only bounds how long it waits for the
// DELETE, it asserts no timing.
func TestRunWakesEarlyForANewEarlierDeadline(t *testing.T) {
	deleted := make(chan string, 4)
	e := New(Config{OnNotify: func(n Notification) {
		if string(n.Payload) == notifyDelete {
			deleted <- string(n.Key)
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	set := func(key, px string) {
		a := [][]byte{[]byte("SET"), []byte(key), []byte("v")}
		if px != "" {
			a = append(a, []byte("PX"), []byte(px))
		}
		res := e.Handle(Request{Args: a, Client: "c", HasTimestamp: true, Timestamp: "1:0:c"})
		if string(res.Payload) != ok {
			t.Fatalf("SET: %q", res.Payload)
		}
	}
	e.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("soon")}, Client: "c"})
	e.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("late")}, Client: "c"})
	set("late", "3600000") // Run now sleeps for an hour
	set("soon", "20")
	select {
	case k := <-deleted:
		if k != "soon" {
			t.Fatalf("deleted %q first", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not expire the key with the earlier deadline")
	}
}

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(t0)
	c.Advance(time.Second)
	if !c.Now().Equal(t0.Add(time.Second)) {
		t.Fatal("Advance")
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Fatal("Set")
	}
}
