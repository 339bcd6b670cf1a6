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
	})
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
