package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

const shortTTL = 300 * time.Millisecond

func TestLeaseAcquireRenewRelease(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		a, b := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		// Long enough that a loaded machine does not miss a renewal by a
		// whole TTL; short enough to see the lease outlive it quickly.
		const ttl = time.Second
		lockA := runtime.NewLock(a, []byte("owner"), ttl)
		lockB := runtime.NewLock(b, []byte("owner"), ttl)

		before := time.Now()
		le, err := lockA.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		first, firstDeadline := le.Token(), le.Deadline()
		// The deadline counts from when the acquiring SET was sent.
		if !firstDeadline.After(before) || firstDeadline.After(time.Now().Add(ttl)) {
			t.Fatalf("Deadline %s is not one TTL after the acquisition (%s..%s)", firstDeadline, before, time.Now())
		}
		if first.IsZero() || le.Err() != nil {
			t.Fatalf("fresh lease: token %s, err %v", first, le.Err())
		}
		holder, ver, err := lockB.Holder(ctx)
		if err != nil || !bytes.Equal(holder, le.Holder()) || ver.Compare(first) != 0 {
			t.Fatalf("Holder = %q @%s (%v), want %q @%s", holder, ver, err, le.Holder(), first)
		}
		if !strings.HasPrefix(string(holder), a.ClientID()+"/") {
			t.Fatalf("holder id %q does not name the client %q", holder, a.ClientID())
		}
		if _, ok, err := lockB.TryAcquire(ctx); ok || err != nil {
			t.Fatalf("TryAcquire of a held lock: %v, %v; want false, nil", ok, err)
		}
		// The lease outlives its first TTL by renewing itself, and every
		// renewal is a new version of the lock key.
		waitFor(t, "renewals past the first TTL", func() bool {
			_, v, err := lockB.Holder(ctx)
			return err == nil && v.Compare(first) > 0 &&
				le.Token().Wall > first.Wall+uint64(ttl/time.Millisecond)
		})
		if le.Err() != nil {
			t.Fatalf("lease lost while renewing: %v", le.Err())
		}
		if !le.Deadline().After(firstDeadline) {
			t.Fatalf("Deadline %s did not move on with the renewals (first %s)", le.Deadline(), firstDeadline)
		}
		if err := le.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := lockB.Holder(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Holder after Release: %v, want ErrNotFound", err)
		}
		if !errors.Is(le.Err(), runtime.ErrLeaseReleased) {
			t.Fatalf("Err after Release: %v", le.Err())
		}
		select {
		case <-le.Lost():
			t.Fatal("Release closed Lost")
		default:
		}
		if err := le.Release(ctx); err != nil {
			t.Fatalf("second Release: %v", err)
		}
		leB, ok, err := lockB.TryAcquire(ctx)
		if !ok || err != nil {
			t.Fatalf("TryAcquire after Release: %v, %v", ok, err)
		}
		if leB.Token().Compare(le.Token()) <= 0 {
			t.Fatalf("new holder's token %s is not above the old one %s", leB.Token(), le.Token())
		}
		if err := leB.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLockRefusesTinyTTL(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		l := runtime.NewLock(c, []byte("l"), 0)
		if _, err := l.Acquire(testCtx(t)); !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("Acquire with TTL 0: %v, want ErrInvalidArgument", err)
		}
	})
}

func TestAcquireWaitsForReleaseAndEndsWithItsContext(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		a, b := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		// A long TTL: only the release (and its DELETE notification, or a
		// poll) lets the waiter in.
		leA, err := runtime.NewLock(a, []byte("owner"), 5*time.Second).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lockB := runtime.NewLock(b, []byte("owner"), 5*time.Second)

		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := lockB.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire of a held lock with a short context: %v, want DeadlineExceeded", err)
		}

		got := make(chan error, 1)
		var leB *runtime.Lease
		go func() {
			var err error
			leB, err = lockB.Acquire(ctx)
			got <- err
		}()
		if err := leA.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := receive(t, "the waiter to acquire", got); err != nil {
			t.Fatal(err)
		}
		if err := leB.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLeaseEndedByItsAcquireContextSaysSo: the context given to Acquire
// bounds the lease, so the usual timeout meant for the wait ends the lease
// too. The lease then expires as documented, and its error says why, so
// that the mistake explains itself.
func TestLeaseEndedByItsAcquireContextSaysSo(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	wctx, cancel := context.WithCancelCause(ctx)
	le, err := runtime.NewLock(c, []byte("owner"), shortTTL).Acquire(wctx)
	if err != nil {
		t.Fatal(err)
	}
	gaveUp := errors.New("the wait is over")
	cancel(gaveUp)
	receive(t, "Lost", le.Lost())
	err = le.Err()
	if !errors.Is(err, runtime.ErrLeaseLost) || !errors.Is(err, runtime.ErrLeaseExpired) {
		t.Fatalf("Err = %v, want ErrLeaseLost and ErrLeaseExpired", err)
	}
	if !strings.Contains(err.Error(), "the context given to Acquire ended (the wait is over)") {
		t.Fatalf("Err = %q, want it to say that the Acquire context ended, and why", err)
	}
	if errors.Is(err, gaveUp) || errors.Is(err, context.Canceled) {
		t.Fatalf("Err = %v matches the context's end, which callers read as their own request's", err)
	}
}

func TestLeaseLostWhenSomeoneElseTakesTheLockKey(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		a, intruder := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		lock := runtime.NewLock(a, []byte("owner"), shortTTL)
		le, err := lock.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := intruder.Set(ctx, []byte("owner"), []byte("intruder"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		receive(t, "Lost", le.Lost())
		if err := le.Err(); !errors.Is(err, runtime.ErrLeaseLost) || !errors.Is(err, runtime.ErrConditionNotMet) {
			t.Fatalf("Err = %v, want ErrLeaseLost caused by ErrConditionNotMet", err)
		}
		k := runtime.NewKey[string](a, []byte("guarded"), codec.String[string]{}, runtime.GuardedBy(lock))
		if _, err := k.Set(ctx, "x"); !errors.Is(err, runtime.ErrLeaseLost) {
			t.Fatalf("guarded write with a lost lease: %v, want ErrLeaseLost", err)
		}
		if _, _, err := intruder.Get(ctx, []byte("guarded")); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("the refused write reached the server: %v", err)
		}
		// Releasing a lost lease leaves the intruder's hold alone.
		if err := le.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if v, _, err := intruder.Get(ctx, []byte("owner")); err != nil || string(v) != "intruder" {
			t.Fatalf("lock key after releasing a lost lease: %q, %v", v, err)
		}
	})
}

// TestActiveStandbyFailover is the article's scenario: the active instance
// stops renewing (it hangs, or its process is paused), the standby takes
// the lock once the TTL has passed, and the former active's late write is
// refused: locally, because its lease is known lost, and by the service,
// because its fencing token is older than the one now protecting the key.
func TestActiveStandbyFailover(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		active, standby := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		cfgKey := func(c *runtime.Client) (*runtime.Lock, *runtime.Key[string]) {
			l := runtime.NewLock(c, []byte("app/leader"), shortTTL)
			return l, runtime.NewKey[string](c, []byte("app/config"), codec.String[string]{}, runtime.GuardedBy(l))
		}
		lockA, keyA := cfgKey(active)
		lockS, keyS := cfgKey(standby)

		activeCtx, stopActive := context.WithCancel(ctx)
		leA, err := lockA.Acquire(activeCtx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keyA.Set(ctx, "written by active"); err != nil {
			t.Fatal(err)
		}
		if _, err := standby.Set(ctx, []byte("app/config"), []byte("unfenced"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Fatalf("unfenced write to a fenced key: %v, want ErrFencingTokenRequired", err)
		}

		standbyGot := make(chan *runtime.Lease, 1)
		go func() {
			le, err := lockS.Acquire(ctx)
			if err != nil {
				t.Errorf("standby Acquire: %v", err)
			}
			standbyGot <- le
		}()

		stopActive() // the active stops renewing; nothing is released
		leS := receive(t, "the standby to take over", standbyGot)
		if leS == nil {
			t.FailNow()
		}
		if leS.Token().Compare(leA.Token()) <= 0 {
			t.Fatalf("standby token %s not above the active's %s", leS.Token(), leA.Token())
		}
		if _, err := keyS.Set(ctx, "written by standby"); err != nil {
			t.Fatalf("standby's fenced write: %v", err)
		}

		receive(t, "the old active's Lost", leA.Lost())
		if !errors.Is(leA.Err(), runtime.ErrLeaseLost) {
			t.Fatalf("old active Err = %v", leA.Err())
		}
		if _, err := keyA.Set(ctx, "late write"); !errors.Is(err, runtime.ErrLeaseLost) {
			t.Fatalf("old active's write through its lost lease: %v, want ErrLeaseLost", err)
		}
		// A write that was already on its way with the old token (simulated
		// by naming the token explicitly) is refused by the service.
		if _, err := keyA.Set(ctx, "late write", runtime.WithFencingToken(leA.Token())); !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
			t.Fatalf("old active's fenced late write: %v, want ErrFencingTokenLowerVersion", err)
		}
		if e, err := keyS.Get(ctx); err != nil || e.Value != "written by standby" {
			t.Fatalf("config = %q, %v; want the standby's write", e.Value, err)
		}
		if err := leS.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// Nobody holds the lease now: a plain write is refused, and the
		// error says what to do.
		_, err = keyS.Set(ctx, "unfenced")
		if !errors.Is(err, runtime.ErrFencingTokenRequired) || !strings.Contains(err.Error(), "app/leader") {
			t.Fatalf("unfenced write to a guarded key: %v, want ErrFencingTokenRequired naming the lock", err)
		}
	})
}

// TestStaleTokenWriteMarksLeaseLost covers a holder that has not noticed
// yet: the service's refusal of its token is proof of a newer holder, so
// the lease reports itself lost at once.
func TestStaleTokenWriteMarksLeaseLost(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		a, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		lock := runtime.NewLock(a, []byte("lk"), 5*time.Second)
		le, err := lock.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer le.Release(ctx)
		k := runtime.NewKey[string](a, []byte("k"), codec.String[string]{}, runtime.GuardedBy(lock))
		// Someone fences the key with a newer token than the lease's.
		newer, err := other.Set(ctx, []byte("elsewhere"), []byte("x"), runtime.SetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, []byte("k"), []byte("theirs"), runtime.SetOptions{FencingToken: newer}); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Set(ctx, "mine"); !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
			t.Fatalf("write with an older token: %v, want ErrFencingTokenLowerVersion", err)
		}
		receive(t, "Lost", le.Lost())
		if !errors.Is(le.Err(), runtime.ErrFencingTokenLowerVersion) {
			t.Fatalf("Err = %v, want it caused by ErrFencingTokenLowerVersion", le.Err())
		}
	})
}

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

// A renewal that finds no state store attached (ErrNoService, with
// Config.NoServiceWait set as the shell verbs set it) is a gap, a restart
// or a failover, not a verdict: the lease is renewed once a state store
// answers again, within its TTL.
func TestLeaseSurvivesAGapWithNoService(t *testing.T) {
	broker := brokertest.Start(t)
	dir := t.TempDir()
	withDir := servertest.WithOptions(func(o *server.Options) { o.DataDir = dir })
	srv := servertest.NewExternal(t, broker.URL(), withDir)
	cfg := testConfig(t, broker.URL())
	cfg.NoServiceWait = 100 * time.Millisecond
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	// Generous: the gap below lasts until a renewal found no service
	// several times over, on a loaded machine.
	lock := runtime.NewLock(c, []byte("gap"), 15*time.Second)
	le, err := lock.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := le.Token()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Each request gives up after NoServiceWait (a few refusals); many
	// refusals mean renewals failed with ErrNoService more than once.
	noService := c.Stats().NoService
	testwait.Until(t, 30*time.Second, "renewals refused for want of a state store", func() bool {
		return c.Stats().NoService >= noService+30 || le.Err() != nil
	})
	if err := le.Err(); err != nil {
		t.Fatalf("lease lost in a gap with no service: %v", err)
	}
	servertest.NewExternal(t, broker.URL(), withDir)
	testwait.Until(t, 30*time.Second, "a renewal after the gap", func() bool {
		return le.Token().Compare(before) > 0 || le.Err() != nil
	})
	if err := le.Err(); err != nil {
		t.Fatalf("lease lost across the gap: %v", err)
	}
	holder, _, err := lock.Holder(ctx)
	if err != nil || !bytes.Equal(holder, le.Holder()) {
		t.Fatalf("lock key holds %q (%v), want the lease's holder", holder, err)
	}
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A release in a gap with no state store (a failover) retries until a
// state store answers, within the lease's deadline, instead of leaving
// the lock to expire by itself.
func TestLeaseReleaseRetriesAGapWithNoService(t *testing.T) {
	broker := brokertest.Start(t)
	dir := t.TempDir()
	withDir := servertest.WithOptions(func(o *server.Options) { o.DataDir = dir })
	srv := servertest.NewExternal(t, broker.URL(), withDir)
	cfg := testConfig(t, broker.URL())
	cfg.NoServiceWait = 100 * time.Millisecond
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	// Generous: the release below retries for a while on a loaded machine.
	lock := runtime.NewLock(c, []byte("gap-release"), 30*time.Second)
	le, err := lock.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	noService := c.Stats().NoService
	released := make(chan error, 1)
	go func() { released <- le.Release(ctx) }()
	testwait.Until(t, 30*time.Second, "the release refused for want of a state store", func() bool {
		return c.Stats().NoService >= noService+30 || len(released) > 0
	})
	select {
	case err := <-released:
		t.Fatalf("release gave up in a gap with no service: %v", err)
	default:
	}
	servertest.NewExternal(t, broker.URL(), withDir)
	if err := <-released; err != nil {
		t.Fatalf("release across the gap: %v", err)
	}
	if holder, _, err := lock.Holder(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("lock key holds %q (%v) after the release, want it deleted", holder, err)
	}
}

// A release's retries end with the lease: an attempt started just before
// the deadline does not wait out a long Config.NoServiceWait past it (the
// lock expires by itself by then).
func TestLeaseReleaseEndsByTheLeasesDeadline(t *testing.T) {
	broker := brokertest.Start(t)
	srv := servertest.NewExternal(t, broker.URL())
	cfg := testConfig(t, broker.URL())
	cfg.NoServiceWait, cfg.Timeout = 10*time.Minute, 10*time.Minute // both far past the lease
	c := dialConfig(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	le, err := runtime.NewLock(c, []byte("gap-deadline"), 2*time.Second).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- le.Release(ctx) }()
	testwait.Until(t, 30*time.Second, "the release to end with its lease", func() bool { return len(released) > 0 })
	if err := <-released; err == nil {
		t.Fatal("release with no state store reported success")
	}
}
