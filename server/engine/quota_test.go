package engine

import (
	"errors"
	"testing"
)

func TestQuotas(t *testing.T) {
	quota := errp(ErrQuotaExceeded)
	runTable(t, []tableCase{
		{name: "MaxKeys refuses a new key", cfg: Config{MaxKeys: 2}, steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: args("SET b v"), want: ok, wantTS: true},
			{args: args("SET c v"), want: quota},
			{args: args("GET c"), want: null},
		}},
		{name: "MaxKeys allows overwriting a key", cfg: Config{MaxKeys: 1}, steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: args("SET a w"), want: ok, wantTS: true},
		}},
		{name: "MaxKeys frees up on delete", cfg: Config{MaxKeys: 1}, steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: args("DEL a"), want: one, wantTS: true},
			{args: args("SET b v"), want: ok, wantTS: true},
		}},
		{name: "MaxBytes counts key and value", cfg: Config{MaxBytes: 4}, steps: []step{
			{args: args("SET ab cd"), want: ok, wantTS: true},
			{args: []string{"SET", "x", ""}, want: quota},
		}},
		{name: "MaxBytes counts the replaced value out", cfg: Config{MaxBytes: 4}, steps: []step{
			{args: args("SET ab cd"), want: ok, wantTS: true},
			{args: args("SET ab c"), want: ok, wantTS: true},
			{args: args("SET ab cde"), want: quota},
			{args: args("GET ab"), want: bulk("c"), wantTS: true},
		}},
		{name: "a failed condition answers :-1 even with a full quota", cfg: Config{MaxKeys: 1}, steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: args("SET a w NX"), want: minusOne, wantTS: true},
		}},
		{name: "fencing is checked before the quota", cfg: Config{MaxBytes: 3}, steps: []step{
			{args: args("SET a v"), ft: tsAt(0, 0, "S"), want: ok, wantTS: true},
			{args: args("SET a vvvv"), want: errp(ErrFencingTokenRequired)},
		}},
	})
}

func TestQuotaRefusalChangesNothing(t *testing.T) {
	h := newHarness(t, Config{MaxKeys: 1, MaxBytes: 10})
	h.do(step{client: "W", args: args("KEYNOTIFY a")})
	h.do(step{client: "W", args: args("KEYNOTIFY b")})
	set := h.run(step{args: args("SET a v PX 1000"), ft: tsAt(0, 0, "S"), want: ok, wantTS: true})
	before, _ := h.eng.Lookup([]byte("a"))
	h.takeNotes()
	h.run(step{args: args("SET b v"), want: errp(ErrQuotaExceeded)})
	h.run(step{args: args("SET a 0123456789"), ft: tsAt(0, 1, "S"), want: errp(ErrQuotaExceeded)})
	after, _ := h.eng.Lookup([]byte("a"))
	if after.Version != set.Version || string(after.Value) != "v" || after.FencingToken != before.FencingToken || after.Deadline != before.Deadline {
		t.Fatalf("quota refusal changed the key: %+v -> %+v", before, after)
	}
	if h.eng.Len() != 1 || h.eng.Bytes() != 2 {
		t.Fatalf("Len %d Bytes %d", h.eng.Len(), h.eng.Bytes())
	}
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("quota refusal notified: %v", n)
	}
	if err := h.eng.Put([]byte("c"), nil, PutOptions{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("Put beyond quota: %v", err)
	}
}
