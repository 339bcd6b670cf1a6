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

func TestSetIfVersionOnAGuardedKey(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		k := guardedCounter(c, time.Second)
		stale := mustNow(t, c)

		if ok, _, err := k.SetIfVersion(ctx, 1, stale); ok || err != nil {
			t.Fatalf("a version on an absent key: %v, %v; want false, nil", ok, err)
		}
		ok, v1, err := k.SetIfVersion(ctx, 1, hlc.HLC{})
		if !ok || err != nil || v1.IsZero() {
			t.Fatalf("the zero version on an absent key: %v, %s, %v; want true, a version, nil", ok, v1, err)
		}
		if ok, v, err := k.SetIfVersion(ctx, 2, hlc.HLC{}); ok || err != nil || !v.IsZero() {
			t.Fatalf("the zero version on a present key: %v, %s, %v; want false, zero, nil", ok, v, err)
		}
		if ok, _, err := k.SetIfVersion(ctx, 2, stale); ok || err != nil {
			t.Fatalf("a stale version: %v, %v; want false, nil", ok, err)
		}
		// The same value again with the current version: a write, with a
		// new version (a value compare-and-set could not tell them apart).
		ok, v2, err := k.SetIfVersion(ctx, 1, v1)
		if !ok || err != nil || v2.Compare(v1) <= 0 {
			t.Fatalf("the current version: %v, %s, %v; want true and a version after %s", ok, v2, err, v1)
		}
		if ok, _, err := k.SetIfVersion(ctx, 3, v1); ok || err != nil {
			t.Fatalf("the version before the last write: %v, %v; want false, nil", ok, err)
		}
		e, err := k.Get(ctx)
		if err != nil || e.Value != 1 || e.Version != v2 {
			t.Fatalf("Get: %+v, %v; want 1 at %s", e, err, v2)
		}
		// Fenced by the guard, which was released afterwards.
		if _, err := other.Set(ctx, []byte("counter"), []byte("9"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Fatalf("unfenced write after SetIfVersion: %v, want ErrFencingTokenRequired", err)
		}
		if _, _, err := k.Guard().Holder(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("guard lock after SetIfVersion: %v, want it released", err)
		}
		// A TTL option applies to the write.
		ok, _, err = k.SetIfVersion(ctx, 4, v2, runtime.WithTTL(time.Hour))
		if !ok || err != nil {
			t.Fatalf("with a TTL: %v, %v", ok, err)
		}
	})
}

func TestSetIfVersionOnAnUnguardedKeyChecksOnlyAbsence(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[int](c, []byte("plain"), codec.Int[int]{})
		ok, v, err := k.SetIfVersion(ctx, 1, hlc.HLC{})
		if !ok || err != nil || v.IsZero() {
			t.Fatalf("the zero version on an absent key: %v, %s, %v", ok, v, err)
		}
		if ok, _, err := k.SetIfVersion(ctx, 2, hlc.HLC{}); ok || err != nil {
			t.Fatalf("the zero version on a present key: %v, %v; want false, nil", ok, err)
		}
		before := c.Stats().Requests
		if _, _, err := k.SetIfVersion(ctx, 2, v); !errors.Is(err, runtime.ErrNotGuarded) || !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("a non-zero version: %v, want ErrNotGuarded", err)
		}
		if n := c.Stats().Requests - before; n != 0 {
			t.Fatalf("a refused SetIfVersion sent %d requests", n)
		}
		if e, err := k.Get(ctx); err != nil || e.Value != 1 {
			t.Fatalf("Get: %+v, %v; want 1", e, err)
		}
	})
}

// Every racer read the same version and writes back the value it read:
// exactly one wins, every time the race is run, from any number of
// clients.
func TestSetIfVersionHasExactlyOneWinner(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		const clients, perClient = 3, 3
		ctx := testCtx(t)
		var keys []*runtime.Key[int]
		for range clients {
			keys = append(keys, guardedCounter(dial(t, env.url), 2*time.Second))
		}
		if _, _, err := keys[0].SetIfVersion(ctx, 7, hlc.HLC{}); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			seen, err := keys[0].Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for _, k := range keys {
				for range perClient {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ok, _, err := k.SetIfVersion(ctx, seen.Value, seen.Version)
						if err != nil {
							t.Error(err)
						}
						if ok {
							mu.Lock()
							wins++
							mu.Unlock()
						}
					}()
				}
			}
			wg.Wait()
			if wins != 1 {
				t.Fatalf("round %d: %d winners, want exactly 1", round, wins)
			}
		}
	})
}

func TestUpdateCanDeclineToWrite(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, watcher := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		k := guardedCounter(c, 5*time.Second)

		// Absent, and declined: nothing written, the zero version.
		changed, v, err := k.Update(ctx, func(int, bool) (int, error) { return 0, runtime.ErrSkipUpdate })
		if changed || err != nil || !v.IsZero() {
			t.Fatalf("declined on an absent key: %v, %s, %v; want false, zero, nil", changed, v, err)
		}
		if _, err := k.Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("after a declined Update the key exists: %v", err)
		}
		changed, v1, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 1, nil })
		if !changed || err != nil || v1.IsZero() {
			t.Fatalf("a write: %v, %s, %v; want true, a version, nil", changed, v1, err)
		}

		wk := guardedCounter(watcher, 5*time.Second)
		events := make(chan runtime.KeyEvent[int], 8)
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			for ev, err := range wk.WatchWith(wctx, runtime.WatchOptions{Current: true}) {
				if err == nil {
					events <- ev
				}
			}
		}()
		if ev := receive(t, "the initial state", events); ev.Kind != runtime.EventResync || ev.Version != v1 {
			t.Fatalf("first event %+v, want a Resync at %s", ev, v1)
		}

		// Holding the lease, a declined Update sends one GET and nothing
		// else (a wrapped ErrSkipUpdate counts too).
		le, err := k.Guard().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := c.Stats().Requests
		changed, v, err = k.Update(ctx, func(cur int, found bool) (int, error) {
			if !found || cur != 1 {
				t.Errorf("fn got %d, %v; want 1, true", cur, found)
			}
			return cur, fmt.Errorf("unchanged: %w", runtime.ErrSkipUpdate)
		})
		if changed || err != nil || v != v1 {
			t.Fatalf("declined: %v, %s, %v; want false, %s, nil", changed, v, err, v1)
		}
		if n := c.Stats().Requests - before; n != 1 {
			t.Fatalf("a declined Update sent %d requests, want 1 (its GET)", n)
		}
		if err := le.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// The watcher's next event is the next real write, not the
		// declined one.
		changed, v2, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur, nil })
		if !changed || err != nil || v2.Compare(v1) <= 0 {
			t.Fatalf("writing the same value: %v, %s, %v; want a write with a new version", changed, v2, err)
		}
		if ev := receive(t, "the write", events); ev.Kind != runtime.EventSet || ev.Version != v2 || ev.Value != 1 {
			t.Fatalf("next event %+v, want the Set of 1 at %s", ev, v2)
		}
	})
}
