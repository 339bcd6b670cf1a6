package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/hlc"
)

type counterDoc struct {
	N      int            `msgpack:"n"`
	Voters map[string]int `msgpack:"voters"`
}

func guardedCounter(c *runtime.Client, ttl time.Duration) *runtime.Key[int] {
	lock := runtime.NewLock(c, []byte("counter/lock"), ttl)
	return runtime.NewKey[int](c, []byte("counter"), codec.Int[int]{}, runtime.GuardedBy(lock))
}

func TestCompareAndSetSemantics(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		lock := runtime.NewLock(c, []byte("doc/lock"), time.Second)
		k := runtime.NewKey[counterDoc](c, []byte("doc"), codec.MsgPack[counterDoc]{}, runtime.GuardedBy(lock))
		v1 := counterDoc{N: 1, Voters: map[string]int{"a": 1, "b": 2, "c": 3, "d": 4}}
		v2 := counterDoc{N: 2}

		if ok, err := k.CompareAndSet(ctx, v1, v2); ok || err != nil {
			t.Fatalf("CAS on an absent key: %v, %v; want false, nil", ok, err)
		}
		if _, err := k.Set(ctx, v1); err != nil {
			t.Fatal(err)
		}
		if ok, err := k.CompareAndSet(ctx, v2, v1); ok || err != nil {
			t.Fatalf("CAS with a wrong old value: %v, %v; want false, nil", ok, err)
		}
		equal := counterDoc{N: 1, Voters: map[string]int{"d": 4, "c": 3, "b": 2, "a": 1}}
		if ok, err := k.CompareAndSet(ctx, equal, v2); !ok || err != nil {
			t.Fatalf("CAS with an equal old value: %v, %v; want true, nil", ok, err)
		}
		if e, err := k.Get(ctx); err != nil || e.Value.N != 2 {
			t.Fatalf("after CAS: %+v, %v", e.Value, err)
		}
		// The write was fenced, and the lock was released afterwards.
		if _, err := other.Set(ctx, []byte("doc"), []byte("x"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Fatalf("unfenced write after CAS: %v, want ErrFencingTokenRequired", err)
		}
		if _, _, err := lock.Holder(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("guard lock after CAS: %v, want it released", err)
		}

		unguarded := runtime.NewKey[int](c, []byte("plain"), codec.Int[int]{})
		if _, err := unguarded.CompareAndSet(ctx, 1, 2); !errors.Is(err, runtime.ErrNotGuarded) || !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("CAS on an unguarded key: %v, want ErrNotGuarded", err)
		}
		if _, _, err := unguarded.Update(ctx, func(int, bool) (int, error) { return 0, nil }); !errors.Is(err, runtime.ErrNotGuarded) {
			t.Fatalf("Update on an unguarded key: %v, want ErrNotGuarded", err)
		}
	})
}

func TestUpdateSeesAbsenceAndAbortsOnError(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := guardedCounter(c, time.Second)
		_, _, err := k.Update(ctx, func(cur int, found bool) (int, error) {
			if found || cur != 0 {
				t.Errorf("Update on an absent key got %d, found=%v", cur, found)
			}
			return 41, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		if _, _, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 100, boom }); err != boom {
			t.Fatalf("Update whose fn fails: %v, want the fn's error", err)
		}
		if _, _, err := k.Update(ctx, func(cur int, found bool) (int, error) { return cur + 1, nil }); err != nil {
			t.Fatal(err)
		}
		if e, err := k.Get(ctx); err != nil || e.Value != 42 {
			t.Fatalf("counter = %d, %v; want 42", e.Value, err)
		}
		if _, err := c.Set(ctx, []byte("counter"), []byte("NaN"), runtime.SetOptions{FencingToken: mustNow(t, c)}); err != nil {
			t.Fatal(err)
		}
		var de *codec.DecodeError
		if _, _, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 1, nil }); !errors.As(err, &de) {
			t.Fatalf("Update over an undecodable value: %v, want a *codec.DecodeError", err)
		}
	})
}

func mustNow(t *testing.T, c *runtime.Client) hlc.HLC {
	t.Helper()
	h, err := c.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestGuardedWritesUseAHeldLease pins that a lease this client holds
// fences plain writes of the guarded key, and that Update reuses it rather
// than waiting for a lock its own client holds.
func TestGuardedWritesUseAHeldLease(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		k := guardedCounter(c, 5*time.Second)
		le, err := k.Guard().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Set(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, []byte("counter"), []byte("9"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Fatalf("unfenced write: %v, want ErrFencingTokenRequired (the Set was not fenced)", err)
		}
		uctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, _, err := k.Update(uctx, func(cur int, _ bool) (int, error) { return cur + 1, nil }); err != nil {
			t.Fatalf("Update while holding the guard: %v", err)
		}
		if holder, _, err := k.Guard().Holder(ctx); err != nil || string(holder) != string(le.Holder()) {
			t.Fatalf("Update released a lease it did not take: holder %q, %v", holder, err)
		}
		if err := le.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Set(ctx, 5, runtime.WithLease(le)); !errors.Is(err, runtime.ErrLeaseReleased) {
			t.Fatalf("write with a released lease: %v, want ErrLeaseReleased", err)
		}
		if e, err := k.Get(ctx); err != nil || e.Value != 2 {
			t.Fatalf("counter = %d, %v; want 2", e.Value, err)
		}
	})
}

// TestConcurrentIncrementsLoseNothing runs 8 goroutines over 4 clients
// incrementing one counter, through Update (20 each) and through
// CompareAndSet retry loops (5 each: every lost race costs a whole guarded
// round, so this mode is much slower): every increment must land.
func TestConcurrentIncrementsLoseNothing(t *testing.T) {
	const clients, perClient = 4, 2
	for _, mode := range []string{"Update", "CompareAndSet"} {
		increments := 20
		if mode == "CompareAndSet" {
			increments = 5
		}
		t.Run(mode, func(t *testing.T) {
			forEachEnv(t, func(t *testing.T, env *testEnv) {
				ctx := testCtx(t)
				var wg sync.WaitGroup
				errs := make(chan error, clients*perClient)
				for range clients {
					k := guardedCounter(dial(t, env.url), 2*time.Second)
					for range perClient {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range increments {
								if err := increment(ctx, k, mode); err != nil {
									errs <- err
									return
								}
							}
						}()
					}
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				k := guardedCounter(dial(t, env.url), time.Second)
				if e, err := k.Get(ctx); err != nil || e.Value != clients*perClient*increments {
					t.Fatalf("counter = %d, %v; want %d", e.Value, err, clients*perClient*increments)
				}
			})
		})
	}
}

func increment(ctx context.Context, k *runtime.Key[int], mode string) error {
	if mode == "Update" {
		_, _, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 1, nil })
		return err
	}
	for attempt := 0; ; attempt++ {
		if attempt > 1000 {
			return fmt.Errorf("CompareAndSet never succeeded")
		}
		cur := 0
		e, err := k.Get(ctx)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			ok, _, err := k.SetIfAbsent(ctx, 0)
			switch {
			case errors.Is(err, runtime.ErrFencingTokenRequired):
				continue // another goroutine created it meanwhile, fenced
			case err != nil:
				return err
			case !ok:
				continue
			}
		case err != nil:
			return err
		default:
			cur = e.Value
		}
		ok, err := k.CompareAndSet(ctx, cur, cur+1)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
}
