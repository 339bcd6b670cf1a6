package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// The attack of a kept SET with a key over what the data file holds
// (bbolt's 32 KiB): it was answered +OK, then no checkpoint went through
// and no start either, with --repair or not. It is refused with the
// quota error and changes nothing; the same key unkept still works, and
// the data directory restarts, in both commit modes.
func TestPersistRefusesAKeptKeyTheDataFileCannotHold(t *testing.T) {
	quota := "-ERR " + protocol.ErrQuotaExceeded + "\r\n"
	long := strings.Repeat("x", persist.MaxKeyBytes+1)
	longest := strings.Repeat("y", persist.MaxKeyBytes)
	for _, tc := range []struct {
		name        string
		all, direct bool
	}{{"log", false, false}, {"log persist-all", true, false}, {"direct", false, true}, {"direct persist-all", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			n := &diskNode{t: t, dir: t.TempDir(), all: tc.all, direct: tc.direct, clock: engine.NewFakeClock(time.UnixMilli(1696374425000))}
			n.open()
			t.Cleanup(func() { _ = n.srv.Close() })
			n.mustOK(true, "", "SET", "before", "1")
			if !tc.all {
				// Not kept: bound by MaxKeyBytes only (unlimited here).
				n.mustOK(false, "", "SET", long, "volatile")
			}
			if res := n.do(true, "", "SET", long, "kept"); string(res.Payload) != quota {
				t.Fatalf("kept SET of a %d-byte key: %q, want %q", len(long), res.Payload, quota)
			}
			e, ok := n.srv.Engine().Lookup([]byte(long))
			if tc.all && ok || !tc.all && (!ok || string(e.Value) != "volatile" || e.Durable) {
				t.Fatalf("after the refusal: %q durable=%v present=%v", e.Value, e.Durable, ok)
			}
			if err := n.srv.Engine().Put([]byte(long), []byte("v"), engine.PutOptions{Persist: true}); !errors.Is(err, engine.ErrQuotaExceeded) {
				t.Fatalf("kept Put: %v", err)
			}
			n.mustOK(true, "", "SET", longest, "2")
			n.mustOK(true, "", "SET", "after", "3")
			n.restart() // Close checkpoints: it fails on a record bbolt refuses
			got := n.srv.Engine().Keys()
			if len(got) != 3 || got[0] != "after" || got[1] != "before" || got[2] != longest {
				t.Fatalf("keys after restart: %d %.20q", len(got), got)
			}
		})
	}
}
