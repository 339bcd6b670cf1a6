package engine

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

func TestKeynotify(t *testing.T) {
	runTable(t, []tableCase{
		{name: "register answers +OK", steps: []step{
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
		}},
		{name: "register twice answers +OK", steps: []step{
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
		}},
		{name: "STOP of a registration answers +OK", steps: []step{
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY k STOP"), want: ok, wantTS: true},
		}},
		{name: "STOP without registration answers :0", steps: []step{
			{args: args("KEYNOTIFY k STOP"), want: zero, wantTS: true},
		}},
		{name: "STOP twice answers :0 the second time", steps: []step{
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY k STOP"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY k STOP"), want: zero, wantTS: true},
		}},
		{name: "STOP of another client's registration answers :0", steps: []step{
			{client: "A", args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{client: "B", args: args("KEYNOTIFY k STOP"), want: zero, wantTS: true},
		}},
		{name: "Go SDK STOP bytes", steps: []step{
			{args: args("KEYNOTIFY SOMEKEY"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY SOMEKEY STOP"), want: ok, wantTS: true},
		}},
		{name: "unknown option is a syntax error", steps: []step{
			{args: args("KEYNOTIFY k GET"), want: errp(ErrSyntax)},
		}},
		{name: "lower-case stop is a syntax error", steps: []step{
			{args: args("KEYNOTIFY k stop"), want: errp(ErrSyntax)},
		}},
		{name: "KEYNOTIFY needs no __ts", steps: []step{
			{args: args("KEYNOTIFY k"), noTS: true, want: ok, wantTS: true},
		}},
		{name: "KEYNOTIFY ignores __ft", steps: []step{
			{args: args("KEYNOTIFY k"), ft: "junk", want: ok, wantTS: true},
		}},
		{name: "KEYNOTIFY refuses a malformed __ts", steps: []step{
			{args: args("KEYNOTIFY k"), ts: "junk", want: errp(ErrMalformedTimestamp)},
		}},
	})
}

func TestWatchersAreKeptPerClientAndKey(t *testing.T) {
	h := newHarness(t, Config{})
	h.do(step{client: "A", args: args("KEYNOTIFY k")})
	h.do(step{client: "B", args: args("KEYNOTIFY k")})
	h.do(step{client: "A", args: args("KEYNOTIFY k")})
	h.do(step{client: "A", args: args("KEYNOTIFY other")})
	if got := h.eng.Watchers([]byte("k")); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("watchers of k: %v", got)
	}
	h.do(step{client: "A", args: args("KEYNOTIFY k STOP")})
	if got := h.eng.Watchers([]byte("k")); !slices.Equal(got, []string{"B"}) {
		t.Fatalf("watchers of k after A stopped: %v", got)
	}
	if got := h.eng.Watchers([]byte("other")); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("watchers of other: %v", got)
	}
}

func TestDropClientRemovesAllItsRegistrations(t *testing.T) {
	h := newHarness(t, Config{})
	for _, k := range []string{"a", "b", "c"} {
		h.do(step{client: "gone", args: args("KEYNOTIFY " + k)})
	}
	h.do(step{client: "stays", args: args("KEYNOTIFY b")})
	h.eng.DropClient("gone")
	h.eng.DropClient("never-seen")
	for _, k := range []string{"a", "c"} {
		if got := h.eng.Watchers([]byte(k)); len(got) != 0 {
			t.Fatalf("watchers of %s: %v", k, got)
		}
	}
	if got := h.eng.Watchers([]byte("b")); !slices.Equal(got, []string{"stays"}) {
		t.Fatalf("watchers of b: %v", got)
	}
	h.do(step{client: "stays", args: args("SET a v")})
	h.do(step{client: "stays", args: args("SET b v")})
	notes := h.takeNotes()
	if len(notes) != 1 || notes[0].Client != "stays" || string(notes[0].Key) != "b" {
		t.Fatalf("notifications after DropClient: %+v", notes)
	}
	h.run(step{client: "gone", args: args("KEYNOTIFY a STOP"), want: zero, wantTS: true})
}

// note is a notification in comparable form.
type note struct {
	client, key, payload string
}

func notesOf(ns []Notification) []note {
	out := make([]note, len(ns))
	for i, n := range ns {
		out[i] = note{n.Client, string(n.Key), string(n.Payload)}
	}
	return out
}

const (
	notifyDelete = "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"
)

func notifySet(v string) string {
	return "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n" + bulk(v)
}

func TestNotificationsFollowEveryChangeInOrder(t *testing.T) {
	h := newHarness(t, Config{})
	h.do(step{client: "W", args: args("KEYNOTIFY k")})
	h.do(step{client: "X", args: args("KEYNOTIFY k")})
	var versions []hlc.HLC
	for _, s := range []step{
		{client: "W", args: args("SET k v1")}, // the changing client is notified too
		{client: "Y", args: []string{"SET", "k", ""}},
		{client: "Y", args: args("SET k v3 NX")}, // fails: no notification
		{client: "Y", args: args("VDEL k nope")}, // fails: no notification
		{client: "Y", args: []string{"VDEL", "k", ""}},
		{client: "Y", args: args("DEL k")}, // absent: no notification
		{client: "Y", args: args("SET k v4")},
		{client: "Y", args: args("DEL k")},
		{client: "Y", args: args("GET k")},
		{client: "Y", args: args("SET other v")},
	} {
		res := h.do(s)
		switch string(res.Payload) {
		case ok, one:
			if s.args[1] == "k" {
				versions = append(versions, res.Version)
			}
		}
	}
	want := []note{
		{"W", "k", notifySet("v1")}, {"X", "k", notifySet("v1")},
		{"W", "k", notifySet("")}, {"X", "k", notifySet("")},
		{"W", "k", notifyDelete}, {"X", "k", notifyDelete},
		{"W", "k", notifySet("v4")}, {"X", "k", notifySet("v4")},
		{"W", "k", notifyDelete}, {"X", "k", notifyDelete},
	}
	got := h.takeNotes()
	if !slices.Equal(notesOf(got), want) {
		t.Fatalf("notifications\n got %q\nwant %q", notesOf(got), want)
	}
	for i, n := range got {
		if n.Version != versions[i/2] {
			t.Fatalf("notification %d version %v, the change's response had %v", i, n.Version, versions[i/2])
		}
	}
}

func TestNotificationsWithoutWatchersAreNotMadeOrReplayed(t *testing.T) {
	h := newHarness(t, Config{})
	h.do(step{args: args("SET k v")})
	h.do(step{client: "W", args: args("KEYNOTIFY k")})
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("notified %v", n)
	}
	h.do(step{client: "W", args: args("KEYNOTIFY k STOP")})
	h.do(step{args: args("SET k w")})
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("notified after STOP: %v", n)
	}
}

func TestEngineWithoutOnNotifyStillWorks(t *testing.T) {
	e := New(Config{})
	e.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("k")}, Client: "c"})
	res := e.Handle(Request{Args: [][]byte{[]byte("SET"), []byte("k"), []byte("v")}, HasTimestamp: true, Timestamp: "1:0:c"})
	if string(res.Payload) != ok {
		t.Fatalf("%q", res.Payload)
	}
}

// NotifyCurrent tells every registration its key's state: the value and
// version of a key that exists, DELETE for one that does not.
func TestNotifyCurrentSendsEveryRegistrationItsKeysState(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.Handle(h.request(step{client: "W1", args: []string{"KEYNOTIFY", "here"}}))
	h.eng.Handle(h.request(step{client: "W2", args: []string{"KEYNOTIFY", "here"}}))
	h.eng.Handle(h.request(step{client: "W1", args: []string{"KEYNOTIFY", "gone"}}))
	set := h.eng.Handle(h.request(step{args: []string{"SET", "here", "v"}}))
	h.eng.Handle(h.request(step{args: []string{"SET", "unwatched", "v"}}))
	h.notes = nil
	h.eng.NotifyCurrent()
	got := map[string]string{}
	for _, n := range h.notes {
		got[n.Client+" "+string(n.Key)] = string(n.Payload)
		if string(n.Key) == "here" && n.Version != set.Version {
			t.Fatalf("notification of here has version %v, want its SET's %v", n.Version, set.Version)
		}
	}
	want := map[string]string{
		"W1 here": string(resp3.AppendNotifySet(nil, []byte("v"))),
		"W2 here": string(resp3.AppendNotifySet(nil, []byte("v"))),
		"W1 gone": string(resp3.AppendNotifyDelete(nil)),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NotifyCurrent sent %q, want %q", got, want)
	}
}

// NotifyCurrent tells a state not yet durable only once it is: the
// notification waits for the pending change.
func TestNotifyCurrentWaitsForAPendingChange(t *testing.T) {
	h, _ := newHeldHarness(t, true)
	h.decide(step{client: "W", args: []string{"KEYNOTIFY", "p"}}, false)
	set := h.decide(step{args: []string{"SET", "p", "v"}}, false)
	if set.Wait == 0 {
		t.Fatal("SET of a kept key waits for nothing")
	}
	h.notes = nil
	h.eng.NotifyCurrent()
	if len(h.notes) != 1 || h.notes[0].Wait != set.Wait {
		t.Fatalf("notifications %+v, want one waiting for %d", h.notes, set.Wait)
	}
}
