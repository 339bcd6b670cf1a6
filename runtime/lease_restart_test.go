package runtime_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestLeaseAcrossBrokerRestart drops every connection under a held lease.
// Whether the lease survives depends on how fast the reconnect is, so both
// outcomes pass, but never silence: either renewals resume and the lock key
// still names this lease, or Lost fires with an ErrLeaseLost.
func TestLeaseAcrossBrokerRestart(t *testing.T) {
	broker := brokertest.Start(t)
	servertest.NewExternal(t, broker.URL())
	c := dial(t, broker.URL())
	ctx := testCtx(t)
	lock := runtime.NewLock(c, []byte("owner"), 2*time.Second)
	le, err := lock.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := le.Token()
	broker.Restart()

	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for le.Token().Compare(before) <= 0 && le.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	select {
	case <-le.Lost():
		if !errors.Is(le.Err(), runtime.ErrLeaseLost) {
			t.Fatalf("Lost fired with Err %v", le.Err())
		}
		t.Logf("lease lost across the restart: %v", le.Err())
	case <-renewed:
		if le.Err() != nil {
			break // lost after all; Lost is closed too
		}
		holder, _, err := lock.Holder(ctx)
		if err != nil || !bytes.Equal(holder, le.Holder()) {
			t.Fatalf("lease renewed but the lock key holds %q (%v)", holder, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lease neither renewed nor reported its loss")
	}
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
