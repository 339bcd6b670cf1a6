package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// Lease outcomes. A *LeaseLostError matches ErrLeaseLost and unwraps to why
// the lease was lost.
var (
	// ErrLeaseLost: the lease is no longer held, so a write that would
	// carry its fencing token was refused before it was sent.
	ErrLeaseLost = errors.New("statestore: lease lost")
	// ErrLeaseExpired: the lease's TTL passed without a successful renewal
	// (renewal stopped because the Acquire context ended, or kept failing).
	// In the first case the error that matches it says so, and why the
	// context ended.
	ErrLeaseExpired = errors.New("statestore: lease expired without renewal")
	// ErrLeaseReleased: the lease was released; it cannot fence writes.
	ErrLeaseReleased = errors.New("statestore: lease released")
)

// LeaseLostError says which lock's lease was lost and why: ErrConditionNotMet
// (another holder's value is in the lock key), ErrLeaseExpired,
// ErrFencingTokenLowerVersion (a write proved a newer holder exists), or the
// renewal's own error.
type LeaseLostError struct {
	Lock  string
	Cause error
}

func (e *LeaseLostError) Error() string {
	return prefix + "lease on " + e.Lock + " lost: " + bare(e.Cause)
}

// Is matches ErrLeaseLost.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// Unwrap returns the cause.
func (e *LeaseLostError) Unwrap() error { return e.Cause }

// Lock is a named lock in the state store, used for leader election and to
// guard keys. It is a handle: making one sends nothing, and any number of
// handles may name the same lock. The lock key holds the current holder's
// id while a lease is held and expires TTL after the last renewal, so a
// holder that dies frees the lock by itself.
type Lock struct {
	c    *Client
	name []byte
	ttl  time.Duration
}

// NewLock returns a handle on the lock stored under name whose leases last
// ttl between renewals. Generated code calls it; ttl must be at least a
// millisecond (Acquire refuses it otherwise).
func NewLock(c *Client, name []byte, ttl time.Duration) *Lock {
	return &Lock{c: c, name: append([]byte(nil), name...), ttl: ttl}
}

// Name returns the lock's key.
func (l *Lock) Name() string { return string(l.name) }

// TTL returns how long a lease lasts without renewal.
func (l *Lock) TTL() time.Duration { return l.ttl }

// Holder returns the id stored in the lock key (the holder of the current
// lease) and its version. A free lock gives ErrNotFound.
func (l *Lock) Holder(ctx context.Context) ([]byte, hlc.HLC, error) {
	return l.c.Get(ctx, l.name)
}

func (l *Lock) check() error {
	if l.ttl < time.Millisecond {
		return invalidArg("lock %q: TTL %s is below one millisecond", l.name, l.ttl)
	}
	return nil
}

// newHolder returns an id unique to one lease: the client id (so that an
// operator reading the lock key sees which client holds it) and 64 random
// bits (so that two leases of one client never renew each other's hold).
func (l *Lock) newHolder() []byte {
	var r [8]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	id := l.c.ClientID()
	b := make([]byte, 0, len(id)+1+2*len(r))
	b = append(b, id...)
	b = append(b, '/')
	return hex.AppendEncode(b, r[:])
}

// TryAcquire makes one attempt to take the lock. ok is false, with a nil
// error, when someone else holds it. On success the lease renews itself
// until Release or until ctx ends (see Acquire).
func (l *Lock) TryAcquire(ctx context.Context) (lease *Lease, ok bool, err error) {
	if err := l.check(); err != nil {
		return nil, false, err
	}
	return l.attempt(ctx, l.newHolder())
}

func (l *Lock) attempt(ctx context.Context, holder []byte) (*Lease, bool, error) {
	sent := time.Now()
	tok, err := l.c.Set(ctx, l.name, holder, SetOptions{Condition: IfNotExistsOrEqual, TTL: l.ttl})
	switch {
	case errors.Is(err, ErrConditionNotMet):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return startLease(ctx, l, holder, tok, sent), true, nil
}

// Acquire waits until it takes the lock or ctx ends. While it waits it
// watches the lock key, so it tries again as soon as the holder releases
// the lock or its lease expires; it also polls, in case a notification is
// missed. When the broker refuses the client's notifications
// (ErrNotificationsUnavailable) it only polls: every half TTL, between
// 20 ms and 2 s, with jitter.
//
// ctx also bounds the lease's life: the lease renews itself every third of
// the TTL until Release is called or ctx ends. When ctx ends renewal stops
// but nothing is deleted (the way a crashed holder behaves): the lock key
// expires on the server one TTL after the last renewal, and Lost fires
// locally no later than that. So pass a context that lives as long as the
// lease should, not a short request timeout; to give up waiting early,
// cancel that context (nothing is held yet) or use TryAcquire.
//
// In particular the usual way of bounding a call,
//
//	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
//	defer cancel()
//	lease, err := lock.Acquire(wctx) // the lease ends with wctx
//
// bounds the lease as well: it stops renewing after 5 s or when the
// function returns, whichever is first. That failure is loud and safe (Lost
// closes, guarded writes fail with ErrLeaseLost, no two holders), but it is
// a failure. To bound only the wait, cancel the context given to Acquire
// only on giving up (releasing a lease that arrives just then) and keep it
// alive once a lease is returned, or loop on TryAcquire until a deadline. (Renewal cannot simply outlive ctx: code
// that ends its leases by ending their context, as a crashed holder would,
// would then hold its locks for ever.)
func (l *Lock) Acquire(ctx context.Context) (*Lease, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	holder := l.newHolder()
	if lease, ok, err := l.attempt(ctx, holder); ok || (err != nil && !IsRetryable(err)) {
		return lease, err
	}

	wctx, stopWatch := context.WithCancel(ctx)
	wake := make(chan struct{}, 1)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev, err := range l.c.Watch(wctx, l.name) {
			if err == nil && (ev.Kind == EventDelete || ev.Kind == EventResync && !ev.Found) {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	defer func() {
		stopWatch()
		<-watchDone
	}()

	poll := min(max(l.ttl/2, 20*time.Millisecond), 2*time.Second)
	// The watch registers in the background, and a release that happened
	// between the first attempt and the registration sends its notification
	// to nobody. A second attempt soon after starting the watch closes most
	// of that gap; polling covers the rest.
	timer := time.NewTimer(min(poll, 50*time.Millisecond))
	defer timer.Stop()
	for failures := 0; ; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		lease, ok, err := l.attempt(ctx, holder)
		switch {
		case ok:
			return lease, nil
		case err == nil:
			failures = 0
			timer.Reset(jitter(poll))
		case IsRetryable(err) || errors.Is(err, ErrNoService):
			// Already waiting: a gap with no state store (a failover)
			// does not end the wait; only ctx does.
			failures++
			timer.Reset(min(jitter(poll), l.c.backoff.delay(failures)))
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			return nil, err
		}
	}
}

// jitter spreads d over [0.8d, 1.2d) so that waiters do not poll in step.
func jitter(d time.Duration) time.Duration {
	var b [1]byte
	_, _ = rand.Read(b[:])
	return d*4/5 + d*2/5*time.Duration(b[0])/256
}

// Lease is one holding of a Lock. It renews itself in the background; its
// Token is the fencing token that guarded writes carry. A Lease is safe for
// concurrent use.
//
// Losing a lease is loud: Lost is closed and Err says why, and every write
// that would carry the lease's token fails with ErrLeaseLost before it is
// sent. The lease counts as lost locally as soon as one TTL has passed since
// the last successful renewal was sent, which is no later than the server
// lets the lock key expire.
type Lease struct {
	lock   *Lock
	holder []byte

	stop     chan struct{} // closed by Release
	stopOnce sync.Once
	done     chan struct{} // closed when the renewal goroutine exits
	lost     chan struct{} // closed when the lease is lost

	mu       sync.Mutex
	token    hlc.HLC
	deadline time.Time // local expiry: send time of the last renewal + TTL
	err      error     // why it was lost
	released bool
	stopped  error // why renewal stopped before the lease ended: the Acquire context's cause
}

func startLease(ctx context.Context, l *Lock, holder []byte, tok hlc.HLC, sent time.Time) *Lease {
	le := &Lease{
		lock:     l,
		holder:   holder,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		lost:     make(chan struct{}),
		token:    tok,
		deadline: sent.Add(l.ttl),
	}
	hold(le)
	go le.renew(ctx)
	return le
}

// Lock returns the lock this lease holds.
func (le *Lease) Lock() *Lock { return le.lock }

// Holder returns the id this lease stores in the lock key.
func (le *Lease) Holder() []byte { return append([]byte(nil), le.holder...) }

// Token returns the fencing token: the version the service gave the latest
// successful acquire or renewal.
func (le *Lease) Token() hlc.HLC {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.token
}

// Deadline returns when the lease ends unless a renewal succeeds first: the
// send time of the latest successful acquire or renewal plus the TTL. The
// service counts the TTL from when it received that request, so it keeps
// the lock key for this holder at least until Deadline (clocks running at
// the same rate); work that must end before anyone else can take the lock
// must end by then. Renewals move it forward.
func (le *Lease) Deadline() time.Time {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.deadline
}

// Lost is closed when the lease is lost (not when it is released).
func (le *Lease) Lost() <-chan struct{} { return le.lost }

// Err returns nil while the lease is held, a *LeaseLostError once it is
// lost, and ErrLeaseReleased after Release.
func (le *Lease) Err() error {
	le.mu.Lock()
	defer le.mu.Unlock()
	switch {
	case le.err != nil:
		return le.err
	case le.released:
		return ErrLeaseReleased
	}
	return nil
}

// valid returns the lease's token if it may still fence a write, and its
// local deadline.
func (le *Lease) valid() (hlc.HLC, time.Time, error) {
	le.mu.Lock()
	if le.err == nil && !le.released && !time.Now().Before(le.deadline) {
		// The watchdog has not run yet, but the TTL is over all the same.
		le.loseLocked(le.expiredLocked())
	}
	tok, dl, err := le.token, le.deadline, le.err
	if err == nil && le.released {
		err = ErrLeaseReleased
	}
	le.mu.Unlock()
	return tok, dl, err
}

// markLost records why the lease was lost, once.
func (le *Lease) markLost(cause error) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.err == nil && !le.released {
		le.loseLocked(cause)
	}
}

// markExpired records that the TTL passed without a renewal, once.
func (le *Lease) markExpired() {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.err == nil && !le.released {
		le.loseLocked(le.expiredLocked())
	}
}

// expiredLocked is why a lease whose TTL passed is lost: ErrLeaseExpired,
// and, when renewal stopped because the Acquire context ended, that too,
// since a context meant to bound only the wait is an easy mistake to make.
func (le *Lease) expiredLocked() error {
	if le.stopped == nil {
		return ErrLeaseExpired
	}
	// %v, not %w: the lease did not time out as a request does, and a
	// caller that retries on context.DeadlineExceeded must not retry this.
	return fmt.Errorf("%w: renewal stopped when the context given to Acquire ended (%v)", ErrLeaseExpired, le.stopped)
}

func (le *Lease) loseLocked(cause error) {
	le.err = &LeaseLostError{Lock: string(le.lock.name), Cause: cause}
	close(le.lost)
}

// renew keeps the lease alive until Release, ctx's end or the loss of the
// lease. After ctx ends it only waits for the deadline, so that Lost fires
// when the server lets the lock go.
func (le *Lease) renew(ctx context.Context) {
	defer close(le.done)
	l := le.lock
	// Renewal requests end with ctx or at Release, whichever comes first.
	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()
	go func() {
		select {
		case <-le.stop:
			cancelReqs()
		case <-reqCtx.Done():
		}
	}()

	every := l.ttl / 3
	next := time.NewTimer(every)
	defer next.Stop()
	le.mu.Lock()
	watchdog := time.NewTimer(time.Until(le.deadline))
	le.mu.Unlock()
	defer watchdog.Stop()
	renewing := ctx.Done()
	for failures := 0; ; {
		select {
		case <-le.stop:
			return
		case <-le.lost:
			return
		case <-watchdog.C:
			le.markExpired()
			return
		case <-renewing:
			renewing = nil // a nil channel never fires: stop renewing, keep the watchdog
			le.mu.Lock()
			le.stopped = context.Cause(ctx)
			le.mu.Unlock()
			next.Stop()
			continue
		case <-next.C:
		}
		le.mu.Lock()
		deadline := le.deadline
		le.mu.Unlock()
		if !time.Now().Before(deadline) {
			le.markExpired()
			return
		}
		// No renewal may be sent after the local deadline: by then the
		// server may have given the lock to someone else.
		rctx, cancel := context.WithDeadline(reqCtx, deadline)
		sent := time.Now()
		tok, err := l.c.Set(rctx, l.name, le.holder, SetOptions{Condition: IfNotExistsOrEqual, TTL: l.ttl})
		cancel()
		switch {
		case err == nil:
			failures = 0
			le.mu.Lock()
			if le.err == nil && !le.released {
				le.token, le.deadline = tok, sent.Add(l.ttl)
				watchdog.Reset(time.Until(le.deadline))
			}
			le.mu.Unlock()
			next.Reset(every)
		case errors.Is(err, ErrConditionNotMet):
			le.markLost(err)
			return
		case IsRetryable(err) || errors.Is(err, ErrNoService) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			// Transient, or cut short by the deadline, Release or ctx; the
			// loop's other cases decide what comes next. ErrNoService
			// (Config.NoServiceWait) is a gap with no state store, a
			// restart or a failover: the lock key may well outlive it, so
			// only the deadline ends the lease.
			failures++
			next.Reset(min(every, l.c.backoff.delay(failures)))
		default:
			le.markLost(err)
			return
		}
	}
}

// Release stops renewal and deletes the lock key if it still holds this
// lease's id (VDEL), so that a waiting Acquire gets the lock at once. It
// returns nil when the lock no longer belongs to this lease afterwards
// (deleted now, already expired, or taken by someone else after a loss).
// Release is idempotent; after it, the lease fences no write.
//
// Like renewals, Release retries ErrNoService (a gap with no state store:
// a restart or a failover) until the lease's local deadline or the end of
// ctx, whichever comes first: past the deadline the lock expires by
// itself, and within it a waiting Acquire would otherwise wait for the
// TTL.
func (le *Lease) Release(ctx context.Context) error {
	le.stopOnce.Do(func() { close(le.stop) })
	<-le.done
	le.mu.Lock()
	le.released = true
	deadline := le.deadline
	le.mu.Unlock()
	unhold(le)
	for failures := 1; ; failures++ {
		// An attempt started before the deadline ends by it: a wait for a
		// state store (Config.NoServiceWait) must not outlast the lease.
		attempt, cancel := ctx, context.CancelFunc(func() {})
		if time.Now().Before(deadline) {
			attempt, cancel = context.WithDeadline(ctx, deadline)
		}
		_, _, err := le.lock.c.VDel(attempt, le.lock.name, le.holder, DelOptions{})
		cancel()
		if errors.Is(err, ErrConditionNotMet) {
			return nil
		}
		if !errors.Is(err, ErrNoService) || !time.Now().Before(deadline) {
			return err
		}
		t := time.NewTimer(min(time.Until(deadline), le.lock.c.backoff.delay(failures)))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		if !time.Now().Before(deadline) {
			return err
		}
	}
}
