package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// ErrNotGuarded: CompareAndSet or Update on a key that has no guard lock,
// or SetIfVersion there with a version other than zero. It matches
// ErrInvalidArgument too.
var ErrNotGuarded = fmt.Errorf("%w: key has no guard lock", ErrInvalidArgument)

// Guarded operations within one process also take turns locally, so that
// goroutines sharing a Client (and so sharing a lease this client already
// holds) do not interleave their reads and writes. That state lives on the
// Client, in its guardTable, one entry per lock name while anything uses it.

// guardTable is what a Client knows about the locks it uses: per lock name,
// the lease it holds and the turn of guarded operations.
type guardTable struct {
	mu sync.Mutex
	m  map[string]*guardState
}

// guardState is what a Client knows about one lock: the lease it holds, and
// the turn of guarded operations in this process.
type guardState struct {
	turn  chan struct{} // capacity 1; held while a guarded operation runs
	held  *Lease        // the lease this client holds on the lock, lost or not, until Release
	users int           // goroutines between enterGuard and leaveGuard, plus one while held != nil
}

func (g *guardTable) stateLocked(name string) *guardState {
	st := g.m[name]
	if st == nil {
		if g.m == nil {
			g.m = make(map[string]*guardState)
		}
		st = &guardState{turn: make(chan struct{}, 1)}
		g.m[name] = st
	}
	return st
}

func (g *guardTable) dropIfUnusedLocked(name string, st *guardState) {
	if st.users == 0 {
		delete(g.m, name)
	}
}

// hold records le as the lease its client holds on its lock, replacing an
// older (necessarily lost) one.
func hold(le *Lease) {
	g := &le.lock.c.guards
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stateLocked(string(le.lock.name))
	if st.held == nil {
		st.users++
	}
	st.held = le
}

// unhold forgets le if it is still the lease held.
func unhold(le *Lease) {
	g, name := &le.lock.c.guards, string(le.lock.name)
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.m[name]; st != nil && st.held == le {
		st.held = nil
		st.users--
		g.dropIfUnusedLocked(name, st)
	}
}

// heldLease returns the lease l's client holds on l, or nil. A lost lease
// is returned too, so that writes fail loudly instead of going unfenced.
func heldLease(l *Lock) *Lease {
	g := &l.c.guards
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.m[string(l.name)]; st != nil {
		return st.held
	}
	return nil
}

// enterGuard waits for this process's turn on l.
func enterGuard(ctx context.Context, l *Lock) (*guardState, error) {
	g, name := &l.c.guards, string(l.name)
	g.mu.Lock()
	st := g.stateLocked(name)
	st.users++
	g.mu.Unlock()
	select {
	case st.turn <- struct{}{}:
		return st, nil
	case <-ctx.Done():
		g.mu.Lock()
		st.users--
		g.dropIfUnusedLocked(name, st)
		g.mu.Unlock()
		return nil, ctx.Err()
	}
}

func leaveGuard(l *Lock, st *guardState) {
	<-st.turn
	g := &l.c.guards
	g.mu.Lock()
	st.users--
	g.dropIfUnusedLocked(string(l.name), st)
	g.mu.Unlock()
}

// guarded runs op while this client holds the guard lease: the one it
// already holds if that is still valid, else one acquired here (waiting for
// other holders) and released afterwards.
func (k *Key[T]) guarded(ctx context.Context, op func(*Lease) error) (err error) {
	if k.guard == nil {
		return fmt.Errorf("%w (key %q)", ErrNotGuarded, k.name)
	}
	st, err := enterGuard(ctx, k.guard)
	if err != nil {
		return err
	}
	defer leaveGuard(k.guard, st)

	le := heldLease(k.guard)
	if le != nil {
		if _, _, verr := le.valid(); verr != nil {
			le = nil
		}
	}
	if le == nil {
		if le, err = k.guard.Acquire(ctx); err != nil {
			return err
		}
		defer func() {
			// Release even when ctx has ended: a lock left behind would
			// make everyone else wait for its TTL.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.c.cfg.Timeout)
			defer cancel()
			if rerr := le.Release(rctx); err == nil && rerr != nil {
				err = rerr
			}
		}()
	}
	return op(le)
}

// CompareAndSet replaces the value with new if it currently is old, compared
// as encoded bytes (the codec is deterministic, so equal values compare
// equal). swapped is false, with a nil error, when the key holds something
// else or is absent. The key must have a guard lock (else ErrNotGuarded).
// A swap that breaks the key's transition rules (Transitions) is refused
// with a *TransitionError (ErrTransition) and nothing is written.
//
// Comparing values has the ABA problem of any value compare-and-set: a
// value written again since it was read, or a new value equal to the old
// one, still compares equal, so several callers that read the same value
// can all "win" in turn. To let exactly one of them win, compare versions
// with SetIfVersion.
//
// The state store has no atomic compare-and-set: it compares values only in
// SET NEX and VDEL, never in a SET of a new value. CompareAndSet is made
// safe by the guard lock instead: it takes the guard's lease (reusing one
// this client holds, else acquiring one and releasing it afterwards), reads,
// compares, and writes with the lease's fencing token. Other clients doing
// the same wait for the lock. A former holder paused past its lease cannot
// clobber the result: its lease refuses to fence anything once a TTL has
// passed since its last renewal was sent, and once a key carries a fencing
// token the service refuses every unfenced write and every write with an
// older token. What fencing cannot stop is a write already sent by a holder
// whose lease then expired, arriving between the next holder's read and
// write; keep network delays well below the TTL.
func (k *Key[T]) CompareAndSet(ctx context.Context, old, new T) (swapped bool, err error) {
	oldB, err := k.codec.Encode(old)
	if err != nil {
		return false, err
	}
	newB, err := k.codec.Encode(new)
	if err != nil {
		return false, err
	}
	err = k.guarded(ctx, func(le *Lease) error {
		cur, _, err := k.getRaw(ctx)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return err
		case !bytes.Equal(cur, oldB) && !k.currentEquals(cur, oldB):
			return nil
		}
		if err := k.checkTransition(&old, true, &new); err != nil {
			return err
		}
		wc := k.writeConfig(nil)
		wc.lease = le
		if _, err := k.setRaw(ctx, newB, Always, wc); err != nil {
			return err
		}
		swapped = true
		return k.dropOld(ctx, wc)
	})
	return swapped, err
}

// currentEquals reports whether stored bytes written in an earlier form
// of the value (a field since renamed, say) encode to want today, for a
// codec that reads earlier forms (codec.Upgrader).
func (k *Key[T]) currentEquals(stored, want []byte) bool {
	u, ok := k.codec.(codec.Upgrader)
	if !ok {
		return false
	}
	cur, err := u.Current(stored)
	return err == nil && bytes.Equal(cur, want)
}

// SetIfVersion stores v only if the key's current version is version, the
// one the caller read (an Entry's Version, a watch event's Version, what an
// earlier write or Update returned), and returns the new version. The zero
// version stands for "absent": v is stored only if the key does not exist.
// ok is false, with a nil error, when the key has another version or is
// absent (or exists, for the zero version): someone wrote since the caller
// read, and nothing was written. The key's default TTL applies unless an option
// overrides it; on a guarded key the guard lease fences the write, whatever
// fencing option is given.
//
// Versions are never reused, so unlike CompareAndSet this has no ABA
// problem: of several callers that read the same version and race to
// write, exactly one succeeds, even if they all write the value they read.
//
// The state store cannot compare versions itself (its only conditional
// writes are SET NX and NEX, and VDEL), so on a guarded key SetIfVersion
// runs like CompareAndSet: under the guard lease it reads the version,
// compares, and writes with the lease's fencing token, and everything
// CompareAndSet says about that holds here. The promise covers every client
// that writes the key through its guard (a write while holding the lease,
// CompareAndSet, Update, SetIfVersion); once a fenced write has been made,
// the service refuses unfenced writes to the key, so no client can write it
// around the guard.
//
// On a key without a guard lock only the zero version can be checked: that
// is SET NX, which the service applies atomically, so "store only if
// absent" holds against every writer. Any other version fails with
// ErrNotGuarded and sends nothing. Without a lock, a read followed by a write
// could overwrite a change made in between, and SetIfVersion does not offer
// that as a compare-and-set.
//
// On a guarded key with transition rules (Transitions), v is checked
// against the value read, and a write that breaks a rule is refused with
// a *TransitionError (ErrTransition) before it is sent; a stored value
// the codec cannot read is replaced unchecked. The zero version writes
// only over nothing, which every rule allows.
func (k *Key[T]) SetIfVersion(ctx context.Context, v T, version hlc.HLC, opts ...SetOpt) (ok bool, newVersion hlc.HLC, err error) {
	b, err := k.codec.Encode(v)
	if err != nil {
		return false, hlc.HLC{}, err
	}
	wc := k.writeConfig(opts)
	if k.guard == nil {
		if !version.IsZero() {
			return false, hlc.HLC{}, fmt.Errorf("%w (key %q: only the zero version, \"absent\", can be checked without one)", ErrNotGuarded, k.name)
		}
		if present, err := k.oldPresent(ctx); present || err != nil {
			return false, hlc.HLC{}, err
		}
		newVersion, err = k.setRaw(ctx, b, IfNotExists, wc)
		if errors.Is(err, ErrConditionNotMet) {
			return false, hlc.HLC{}, nil
		}
		return err == nil, newVersion, err
	}
	err = k.guarded(ctx, func(le *Lease) error {
		raw, cur, err := k.getRaw(ctx)
		found := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if cur != version { // a miss has the zero version
			return nil
		}
		if found && k.transitions != nil {
			// A stored value the codec cannot read has no rules to keep:
			// the write replaces it.
			if prev, derr := k.codec.Decode(raw); derr == nil {
				if err := k.checkTransition(&prev, true, &v); err != nil {
					return err
				}
			}
		}
		wc.token, wc.lease = hlc.HLC{}, le
		if newVersion, err = k.setRaw(ctx, b, Always, wc); err != nil {
			return err
		}
		ok = true
		return k.dropOld(ctx, wc)
	})
	if !ok {
		newVersion = hlc.HLC{}
	}
	return ok, newVersion, err
}

// ErrSkipUpdate, returned by the function given to Update, leaves the key as
// it is: Update sends no write, so no watcher is notified, and it reports
// changed == false with a nil error. Update never returns it.
var ErrSkipUpdate = errors.New("statestore: update skipped")

// Update reads the value, passes it to fn (found is false, and cur the zero
// value, when the key is absent) and writes what fn returns, all while
// holding the guard lease, so that no concurrent Update in any client is
// lost (see CompareAndSet for how the guard makes that safe). It returns
// whether it wrote, and the key's version afterwards: the new one, or the
// one read (zero when absent) if nothing was written.
//
// fn decides whether to write. Returning ErrSkipUpdate leaves the key
// alone: nothing is sent, no watcher hears of it, and Update returns
// changed == false and a nil error. Returning a value always writes it,
// even one equal to cur: that gives the key a new version and its default
// TTL again, and notifies every watcher. Any other error from fn aborts the
// update, writes nothing and is returned as is. A stored value the codec
// cannot read aborts with its *codec.DecodeError before fn is called. A
// value from fn that breaks the key's transition rules (Transitions) aborts
// with a *TransitionError (ErrTransition), nothing written.
func (k *Key[T]) Update(ctx context.Context, fn func(cur T, found bool) (T, error)) (changed bool, version hlc.HLC, err error) {
	err = k.guarded(ctx, func(le *Lease) error {
		var cur T
		raw, ver, err := k.getRaw(ctx)
		found := err == nil
		switch {
		case found:
			if cur, err = k.codec.Decode(raw); err != nil {
				return err
			}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		next, err := fn(cur, found)
		if errors.Is(err, ErrSkipUpdate) {
			version = ver
			return nil
		}
		if err != nil {
			return err
		}
		if err := k.checkTransition(&cur, found, &next); err != nil {
			return err
		}
		b, err := k.codec.Encode(next)
		if err != nil {
			return err
		}
		wc := k.writeConfig(nil)
		wc.lease = le
		if version, err = k.setRaw(ctx, b, Always, wc); err != nil {
			return err
		}
		changed = true
		return k.dropOld(ctx, wc)
	})
	if err != nil {
		return false, hlc.HLC{}, err
	}
	return changed, version, nil
}
