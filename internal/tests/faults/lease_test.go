package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server/servertest"
)

// A lease holder whose traffic vanishes (a partition: its connection stays
// open, nothing gets through) loses its lease: the lock key expires on the
// server and the standby takes it, the holder's Lost fires, and the
// holder's late writes are refused — locally while it holds the lost
// lease, and by the server when it sends its old token explicitly.
func TestPartitionedLeaseHolderIsFencedOut(t *testing.T) {
	srv := servertest.New(t)
	pa := faultproxy.Start(t, srv.Addr())
	holder := dial(t, config(t, pa.Addr(), "holder"))
	standby := dial(t, config(t, srv.Addr(), "standby"))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()

	const ttl = 2 * time.Second // renewals every 667 ms: room for a stalled -race run
	lockA := runtime.NewLock(holder, []byte("leader"), ttl)
	lockB := runtime.NewLock(standby, []byte("leader"), ttl)
	keyA := runtime.NewKey(holder, []byte("guarded"), codec.String[string]{}, runtime.GuardedBy(lockA))
	keyB := runtime.NewKey(standby, []byte("guarded"), codec.String[string]{}, runtime.GuardedBy(lockB))

	leaseA, err := lockA.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = leaseA.Release(context.Background()) }()
	oldToken := leaseA.Token()
	if _, err := keyA.Set(ctx, "from holder", runtime.WithLease(leaseA)); err != nil {
		t.Fatal(err)
	}

	acquired := make(chan *runtime.Lease, 1)
	go func() {
		le, err := lockB.Acquire(ctx)
		if err != nil {
			t.Errorf("standby Acquire: %v", err)
			close(acquired)
			return
		}
		acquired <- le
	}()
	// Let the standby wait on a held lock before the partition.
	time.Sleep(200 * time.Millisecond)
	select {
	case <-acquired:
		t.Fatal("the standby acquired a lock that was held and renewed")
	default:
	}

	cut := time.Now()
	pa.Blackhole()
	bound := 2*ttl + slack
	select {
	case <-leaseA.Lost():
	case <-time.After(bound):
		t.Fatalf("the partitioned holder's Lost did not fire within %v (TTL %v)", bound, ttl)
	}
	if err := leaseA.Err(); !errors.Is(err, runtime.ErrLeaseLost) {
		t.Fatalf("holder lease Err = %v, want ErrLeaseLost", err)
	}
	lostAfter := time.Since(cut)
	var leaseB *runtime.Lease
	select {
	case leaseB = <-acquired:
		if leaseB == nil {
			t.FailNow()
		}
	case <-time.After(bound):
		t.Fatalf("the standby did not acquire within %v of the partition (TTL %v)", bound, ttl)
	}
	defer func() { _ = leaseB.Release(context.Background()) }()
	if leaseB.Token().Compare(oldToken) <= 0 {
		t.Fatalf("standby token %v is not newer than the old holder's %v", leaseB.Token(), oldToken)
	}
	if _, err := keyB.Set(ctx, "from standby", runtime.WithLease(leaseB)); err != nil {
		t.Fatalf("standby write: %v", err)
	}

	// The old holder's write with its lost lease never leaves the client.
	before := holder.Stats().Requests
	if _, err := keyA.Set(ctx, "late", runtime.WithLease(leaseA)); !errors.Is(err, runtime.ErrLeaseLost) {
		t.Fatalf("late write with the lost lease: %v, want ErrLeaseLost", err)
	}
	if holder.Stats().Requests != before {
		t.Fatal("a write with a lost lease was sent")
	}

	// Healed, the old holder sends its stale token explicitly: the server
	// refuses it.
	pa.Restore()
	settle(t, []*runtime.Client{holder})
	_, err = keyA.Set(ctx, "stale", runtime.WithFencingToken(oldToken))
	if !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
		t.Fatalf("write with the stale token: %v, want ErrFencingTokenLowerVersion", err)
	}
	if _, err := keyA.Delete(ctx, runtime.WithFencingToken(oldToken)); !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
		t.Fatalf("delete with the stale token: %v, want ErrFencingTokenLowerVersion", err)
	}
	e, ok := srv.Engine().Lookup([]byte("guarded"))
	if !ok || string(e.Value) != "from standby" {
		t.Fatalf("guarded key = %q (found %v), want the standby's write", e.Value, ok)
	}
	t.Logf("TTL %v: holder learnt of the loss %v after the partition; the standby took over", ttl, lostAfter.Round(time.Millisecond))
}
