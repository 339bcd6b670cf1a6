package interop

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/services/leasedlock"
	sserrors "github.com/Azure/iot-operations-sdks/go/services/statestore/errors"
)

func TestLockExcludesUntilUnlock(t *testing.T) {
	srv := startServer(t)
	a := dial(t, srv, "a")
	b := dial(t, srv, "b")
	ctx := bounded(t)
	la := leasedlock.NewLock(a, "L")
	lb := leasedlock.NewLock(b, "L")

	if err := la.Lock(ctx, testTimeout); err != nil {
		t.Fatalf("a Lock: %v", err)
	}
	holder, held, err := la.Holder(ctx)
	if err != nil || !held || holder != a.ID() {
		t.Fatalf("Holder = %q, %v, %v; want %q held", holder, held, err, a.ID())
	}
	tokenA, err := la.Token(ctx)
	if err != nil || tokenA.IsZero() {
		t.Fatalf("a Token = %v, %v", tokenA, err)
	}
	if ok, err := lb.Acquire(ctx, testTimeout); err != nil || ok {
		t.Fatalf("b Acquire while a holds = %v, %v; want false, nil", ok, err)
	}
	if _, err := lb.Token(ctx); !errors.Is(err, leasedlock.ErrNoLease) {
		t.Fatalf("b Token after refusal: %v, want ErrNoLease", err)
	}

	// b blocks in Lock until a's VDEL reaches it as a DELETE notification.
	locked := make(chan error, 1)
	go func() { locked <- lb.Lock(ctx, testTimeout) }()
	awaitWatcher(ctx, t, srv, "L", b.ID())
	if err := la.Unlock(ctx); err != nil {
		t.Fatalf("a Unlock: %v", err)
	}
	select {
	case err := <-locked:
		if err != nil {
			t.Fatalf("b Lock: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("b Lock did not return after a unlocked")
	}
	holder, held, err = lb.Holder(ctx)
	if err != nil || !held || holder != b.ID() {
		t.Fatalf("Holder = %q, %v, %v; want %q held", holder, held, err, b.ID())
	}
	tokenB, err := lb.Token(ctx)
	if err != nil || tokenB.Compare(tokenA) <= 0 {
		t.Fatalf("b Token = %v, %v; want one after a's %v", tokenB, err, tokenA)
	}
	if ok, err := la.Acquire(ctx, testTimeout); err != nil || ok {
		t.Fatalf("a Acquire while b holds = %v, %v; want false, nil", ok, err)
	}
	if err := lb.Unlock(ctx); err != nil {
		t.Fatalf("b Unlock: %v", err)
	}
	if _, held, err := lb.Holder(ctx); err != nil || held {
		t.Fatalf("after Unlock held = %v, %v; want free", held, err)
	}
}

// awaitWatcher waits until client has sent KEYNOTIFY for key, which the
// SDK's Lock does just before its first attempt. Its attempt may still be
// in flight when the test goes on; either order ends with the lock taken.
func awaitWatcher(ctx context.Context, t *testing.T, srv *testServer, key, client string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !slices.Contains(srv.eng.Watchers([]byte(key)), client) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%s never sent KEYNOTIFY for %q", client, key)
		}
	}
}

func TestLeaseExpiresWithoutRelease(t *testing.T) {
	srv := startServer(t)
	a := dial(t, srv, "a")
	b := dial(t, srv, "b")
	ctx := bounded(t)

	if ok, err := leasedlock.NewLease(a, "lease").Acquire(ctx, shortTTL); err != nil || !ok {
		t.Fatalf("a Acquire = %v, %v", ok, err)
	}
	locked := make(chan error, 1)
	go func() { locked <- leasedlock.NewLock(b, "lease").Lock(ctx, testTimeout) }()
	awaitWatcher(ctx, t, srv, "lease", b.ID())
	passTTL(srv)
	select {
	case err := <-locked:
		if err != nil {
			t.Fatalf("b Lock: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("b Lock did not return after a's lease expired")
	}
	if holder, held, err := leasedlock.NewLease(a, "lease").Holder(ctx); err != nil || !held || holder != b.ID() {
		t.Fatalf("Holder = %q, %v, %v; want %q", holder, held, err, b.ID())
	}
}

// Edit writes with the lock's fencing token, so the edited key stays fenced
// after the lock is released: later unfenced writes are refused.
func TestLockEditFencesTheKey(t *testing.T) {
	srv := startServer(t)
	c := dial(t, srv, "c")
	ctx := bounded(t)
	lock := leasedlock.NewLock(c, "counter-lock")

	increment := func(_ context.Context, cur string, found bool) (string, bool, error) {
		if !found {
			return "1", true, nil
		}
		n, err := strconv.Atoi(cur)
		if err != nil {
			return "", false, err
		}
		return strconv.Itoa(n + 1), true, nil
	}
	for range 2 {
		if err := lock.Edit(ctx, "counter", testTimeout, increment); err != nil {
			t.Fatalf("Edit: %v", err)
		}
	}
	got, err := c.Get(ctx, "counter")
	if err != nil || got.Value != "2" {
		t.Fatalf("counter = %v, %v; want 2", got, err)
	}
	if _, held, err := lock.Holder(ctx); err != nil || held {
		t.Fatalf("lock after Edit held = %v, %v; want released", held, err)
	}

	_, err = c.Set(ctx, "counter", "99")
	if !errors.Is(err, sserrors.MissingFencingToken) {
		t.Fatalf("unfenced Set of an edited key: %v, want %q", err, string(sserrors.MissingFencingToken))
	}

	remove := func(context.Context, string, bool) (string, bool, error) { return "", false, nil }
	if err := lock.Edit(ctx, "counter", testTimeout, remove); err != nil {
		t.Fatalf("Edit delete: %v", err)
	}
	if got, err := c.Get(ctx, "counter"); err != nil || !got.Version.IsZero() {
		t.Fatalf("counter after delete edit = %v, %v; want absent", got, err)
	}
}

func TestLeaseObserveReportsHolderChanges(t *testing.T) {
	srv := startServer(t)
	observer := dial(t, srv, "observer")
	holder := dial(t, srv, "holder")
	ctx := bounded(t)

	watched := leasedlock.NewLease(observer, "obs")
	changes, stop := watched.Observe()
	t.Cleanup(stop)
	if err := watched.ObserveStart(ctx); err != nil {
		t.Fatalf("ObserveStart: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = watched.ObserveStop(ctx)
	})

	await := func(what string) leasedlock.Change {
		t.Helper()
		select {
		case ch := <-changes:
			return ch
		case <-ctx.Done():
			t.Fatalf("%s: no change observed", what)
		}
		return leasedlock.Change{}
	}

	lease := leasedlock.NewLease(holder, "obs")
	if ok, err := lease.Acquire(ctx, testTimeout); err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if ch := await("acquire"); !ch.Held || ch.Holder != holder.ID() {
		t.Fatalf("change after acquire = %+v, want held by %q", ch, holder.ID())
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if ch := await("release"); ch.Held {
		t.Fatalf("change after release = %+v, want not held", ch)
	}
}
