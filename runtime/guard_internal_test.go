package runtime

import (
	"context"
	"testing"
	"time"
)

// guardEntries counts the guard table entries of one client.
func guardEntries(c *Client) int {
	c.guards.mu.Lock()
	defer c.guards.mu.Unlock()
	return len(c.guards.m)
}

func TestGuardRegistryForgetsLocksNobodyUses(t *testing.T) {
	c := &Client{}
	l := &Lock{c: c, name: []byte("lk"), ttl: time.Second}
	le := &Lease{lock: l, lost: make(chan struct{})}

	hold(le)
	if heldLease(l) != le || guardEntries(c) != 1 {
		t.Fatalf("after hold: held %p, entries %d", heldLease(l), guardEntries(c))
	}
	st, err := enterGuard(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	unhold(le)
	if heldLease(l) != nil || guardEntries(c) != 1 {
		t.Fatalf("unhold while a guarded op runs: held %p, entries %d", heldLease(l), guardEntries(c))
	}
	leaveGuard(l, st)
	if guardEntries(c) != 0 {
		t.Fatalf("entries after everyone left: %d", guardEntries(c))
	}

	// A newer lease replaces an older one; forgetting the older one then
	// leaves the newer in place.
	newer := &Lease{lock: l, lost: make(chan struct{})}
	hold(le)
	hold(newer)
	unhold(le)
	if heldLease(l) != newer {
		t.Fatal("unhold of a replaced lease dropped its successor")
	}
	unhold(newer)
	if guardEntries(c) != 0 {
		t.Fatalf("entries after both leases went: %d", guardEntries(c))
	}
}

func TestGuardTurnsAreExclusiveAndHonourContext(t *testing.T) {
	c := &Client{}
	l := &Lock{c: c, name: []byte("lk"), ttl: time.Second}
	st, err := enterGuard(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := enterGuard(ctx, l); err != context.Canceled {
		t.Fatalf("second enter with an ended context: %v, want context.Canceled", err)
	}
	entered := make(chan struct{})
	go func() {
		st2, err := enterGuard(context.Background(), l)
		if err == nil {
			leaveGuard(l, st2)
		}
		close(entered)
	}()
	select {
	case <-entered:
		t.Fatal("second enter did not wait for the first to leave")
	default:
	}
	leaveGuard(l, st)
	<-entered
	if guardEntries(c) != 0 {
		t.Fatalf("entries left: %d", guardEntries(c))
	}
}

func TestLeaseValidityAndLoss(t *testing.T) {
	l := &Lock{c: &Client{}, name: []byte("lk"), ttl: time.Second}
	le := &Lease{lock: l, lost: make(chan struct{}), deadline: time.Now().Add(time.Hour)}
	if _, _, err := le.valid(); err != nil {
		t.Fatalf("fresh lease: %v", err)
	}
	le.markLost(ErrLeaseExpired)
	le.markLost(ErrConditionNotMet) // the first cause wins; no double close
	_, _, err := le.valid()
	if err != le.Err() || err == nil {
		t.Fatalf("valid after loss: %v, Err %v", err, le.Err())
	}
	select {
	case <-le.Lost():
	default:
		t.Fatal("Lost not closed")
	}

	past := &Lease{lock: l, lost: make(chan struct{}), deadline: time.Now().Add(-time.Millisecond)}
	if _, _, err := past.valid(); err == nil {
		t.Fatal("a lease past its deadline is still valid")
	}
	select {
	case <-past.Lost():
	default:
		t.Fatal("expiry noticed by valid did not close Lost")
	}
}

func TestHolderIDsAreUniquePerLease(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "cid"}}
	l := &Lock{c: c, name: []byte("lk"), ttl: time.Second}
	seen := map[string]bool{}
	for range 100 {
		h := string(l.newHolder())
		if seen[h] || len(h) != len("cid/")+16 || h[:4] != "cid/" {
			t.Fatalf("holder %q repeated or malformed", h)
		}
		seen[h] = true
	}
}

func TestJitterStaysWithinTwentyPercent(t *testing.T) {
	for range 1000 {
		if d := jitter(time.Second); d < 800*time.Millisecond || d >= 1200*time.Millisecond {
			t.Fatalf("jitter(1s) = %s", d)
		}
	}
}
