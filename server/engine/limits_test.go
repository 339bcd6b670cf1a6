package engine

import "testing"

func TestLimits(t *testing.T) {
	quota := errp(ErrQuotaExceeded)
	runTable(t, []tableCase{
		{name: "MaxKeyBytes refuses a longer key in every command", cfg: Config{MaxKeyBytes: 3}, steps: []step{
			{args: args("SET abc v"), want: ok, wantTS: true},
			{args: args("SET abcd v"), want: quota},
			{args: args("GET abcd"), want: quota},
			{args: args("DEL abcd"), want: quota},
			{args: args("VDEL abcd v"), want: quota},
			{args: args("KEYNOTIFY abcd"), want: quota},
			{args: args("GET abc"), want: bulk("v"), wantTS: true},
		}},
		{name: "MaxKeyBytes keeps the empty-key error", cfg: Config{MaxKeyBytes: 3}, steps: []step{
			{args: []string{"GET", ""}, want: errp(ErrKeyLengthZero)},
		}},
		{name: "MaxValueBytes refuses a longer SET value", cfg: Config{MaxValueBytes: 2}, steps: []step{
			{args: args("SET a vv"), want: ok, wantTS: true},
			{args: args("SET a vvv"), want: quota},
			{args: args("SET b vvv NX"), want: quota},
			{args: args("GET a"), want: bulk("vv"), wantTS: true},
			{args: args("GET b"), want: null},
		}},
		{name: "MaxValueBytes does not apply to VDEL", cfg: Config{MaxValueBytes: 2}, steps: []step{
			{args: args("VDEL a vvv"), want: zero, wantTS: true},
		}},
		{name: "MaxWatchesPerClient refuses one more key", cfg: Config{MaxWatchesPerClient: 2}, steps: []step{
			{args: args("KEYNOTIFY a"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY b"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY a"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY c"), want: quota},
			{client: "Other", args: args("KEYNOTIFY c"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY a STOP"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY c"), want: ok, wantTS: true},
		}},
		// Issue #25 (F2): the watch quota counted registrations, not bytes,
		// so long keys held memory no other limit saw.
		{name: "MaxWatchBytesPerClient counts the watched keys' bytes", cfg: Config{MaxWatchBytesPerClient: 6}, steps: []step{
			{args: args("KEYNOTIFY aaa"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY bbbb"), want: quota},
			{args: args("KEYNOTIFY bbb"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY aaa"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY c"), want: quota},
			{client: "Other", args: args("KEYNOTIFY cccccc"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY aaa STOP"), want: ok, wantTS: true},
			{args: args("KEYNOTIFY ccc"), want: ok, wantTS: true},
		}},
		{name: "MaxWatches bounds the registrations of all clients", cfg: Config{MaxWatches: 2}, steps: []step{
			{client: "A", args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{client: "B", args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{client: "C", args: args("KEYNOTIFY k"), want: quota},
			{client: "A", args: args("KEYNOTIFY k"), want: ok, wantTS: true},
			{client: "A", args: args("KEYNOTIFY k STOP"), want: ok, wantTS: true},
			{client: "C", args: args("KEYNOTIFY k"), want: ok, wantTS: true},
		}},
		{name: "MaxWatchBytes bounds the watched bytes of all clients", cfg: Config{MaxWatchBytes: 5}, steps: []step{
			{client: "A", args: args("KEYNOTIFY aaa"), want: ok, wantTS: true},
			{client: "B", args: args("KEYNOTIFY bbb"), want: quota},
			{client: "B", args: args("KEYNOTIFY bb"), want: ok, wantTS: true},
			{client: "C", args: args("KEYNOTIFY c"), want: quota},
		}},
	})
}

// TestWatchCountsFollowDisconnects: a client's registrations leave the
// counts when it goes, so the room is there for the next.
func TestWatchCountsFollowDisconnects(t *testing.T) {
	e := New(Config{MaxWatches: 2, MaxWatchBytes: 8, MaxWatchBytesPerClient: 4})
	do := func(client, key string) Result {
		return e.Handle(Request{Client: client, Args: [][]byte{[]byte("KEYNOTIFY"), []byte(key)}})
	}
	for _, k := range []string{"ab", "cd"} {
		if r := do("A", k); r.Err != "" {
			t.Fatalf("KEYNOTIFY %s: %s", k, r.Err)
		}
	}
	if r := do("B", "x"); r.Err != ErrQuotaExceeded {
		t.Fatalf("third registration: %q, want the quota", r.Err)
	}
	e.DropClient("A")
	for _, k := range []string{"abcd", "efgh"} {
		if r := do("B"+k, k); r.Err != "" {
			t.Fatalf("after the disconnect, KEYNOTIFY %s: %s", k, r.Err)
		}
	}
	if e.watch.total != 2 || e.watch.totalBytes != 8 || len(e.watch.clientBytes) != 2 {
		t.Fatalf("counts %d/%d/%v", e.watch.total, e.watch.totalBytes, e.watch.clientBytes)
	}
}

func TestWatchLimitRefusalRegistersNothing(t *testing.T) {
	h := newHarness(t, Config{MaxWatchesPerClient: 1})
	h.run(step{args: args("KEYNOTIFY a"), want: ok, wantTS: true})
	h.run(step{args: args("KEYNOTIFY b"), want: errp(ErrQuotaExceeded)})
	h.takeNotes()
	h.run(step{client: "W", args: args("SET b v"), want: ok, wantTS: true})
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("refused registration was notified: %v", n)
	}
}
