package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime"
)

// underGuard runs op, a write of the declared key m, while holding the
// lease of the key's guard lock, as generated code's guarded writes do:
// it takes the lock (at once, or waiting up to wait), hands op the lease
// whose fencing token the write must carry, and releases the lock after.
// A lock someone else holds is a negative answer (exit 1) that says how
// to proceed.
func underGuard(ctx context.Context, env *cliEnv, verbName string, c *runtime.Client, m *schemaval.Match, subject string, wait, timeout time.Duration, op func(context.Context, *runtime.Lease) error) error {
	g, _ := m.Guard()
	lockKey, lk := g.Key, g.Lock
	lock := runtime.NewLock(c, []byte(lockKey), lk.TTL)
	guard := g.Describe(subject)

	// The lease renews on its own context until released, whatever
	// happens to the request's.
	leaseCtx, endLease := context.WithCancel(context.WithoutCancel(ctx))
	defer endLease()
	var lease *runtime.Lease
	if wait == 0 {
		le, ok, err := lock.TryAcquire(leaseCtx)
		if err != nil {
			return opError(guard, err)
		}
		if !ok {
			holder, _, herr := lock.Holder(ctx)
			return &exitError{code: exitNegative, err: fmt.Errorf("%s: wait for it with --wait D, or write with the holder's --fencing-token", g.HeldBy(subject, holder, herr == nil))}
		}
		lease = le
	} else {
		le, err := acquire(ctx, leaseCtx, lock, wait)
		if errors.Is(err, errWaitExpired) {
			return &exitError{code: exitNegative, err: fmt.Errorf("%s, held by someone else for longer than --wait %s", guard, wait)}
		}
		if err != nil {
			return lockError(guard, err)
		}
		lease = le
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		if err := lease.Release(rctx); err != nil {
			fmt.Fprintf(env.stderr, "ssgen %s: release lock %q: %s (it expires by itself after %s)\n", verbName, lockKey, libText(err), lk.TTL)
		}
	}()
	return op(ctx, lease)
}
