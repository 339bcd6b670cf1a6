package runtime_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// patternRec is one item a WatchPattern yielded.
type patternRec struct {
	ev  runtime.Event
	err error
}

// watchPattern ranges over a WatchPattern in the background; the channel
// closes when the iteration ends.
func watchPattern(t *testing.T, ctx context.Context, c *runtime.Client, pattern string, opts runtime.PatternWatchOptions) <-chan patternRec {
	t.Helper()
	ch := make(chan patternRec, 1024)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		defer close(ch)
		for ev, err := range c.WatchPattern(ctx, pattern, opts) {
			ch <- patternRec{ev, err}
		}
	}()
	return ch
}

// expectEvent waits for an event of kind on key, skipping others, and
// returns it; an error or the end of the watch fails the test.
func expectEvent(t *testing.T, ch <-chan patternRec, kind runtime.EventKind, key string) runtime.Event {
	t.Helper()
	for {
		r, ok := receiveOK(t, ch)
		if !ok {
			t.Fatalf("watch ended waiting for %s %s", kind, key)
		}
		if r.err != nil {
			t.Fatalf("waiting for %s %s: %v", kind, key, r.err)
		}
		if r.ev.Kind == kind && string(r.ev.Key) == key {
			return r.ev
		}
	}
}

// receiveOK receives from ch within the usual generous bound.
func receiveOK(t *testing.T, ch <-chan patternRec) (patternRec, bool) {
	t.Helper()
	type item struct {
		r  patternRec
		ok bool
	}
	got := make(chan item, 1)
	go func() { r, ok := <-ch; got <- item{r, ok} }()
	it := receive(t, "a pattern watch event", got)
	return it.r, it.ok
}

func put(t *testing.T, env *testEnv, key, value string) {
	t.Helper()
	if err := env.srv.Engine().Put([]byte(key), []byte(value), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestWatchPatternReportsInitialStateThenChangesAndDeletes(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		put(t, env, "pw/a", "1")
		put(t, env, "pw/b", "1")
		put(t, env, "other", "1")
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1})

		seen := map[string]bool{}
		for len(seen) < 2 {
			r, ok := receiveOK(t, ch)
			if !ok || r.err != nil {
				t.Fatalf("initial state: %v (ended: %v)", r.err, !ok)
			}
			if r.ev.Kind != runtime.EventResync || !r.ev.Found || string(r.ev.Value) != "1" || r.ev.Version.IsZero() {
				t.Fatalf("initial event %+v, want a Resync with the value", r.ev)
			}
			if k := string(r.ev.Key); k != "pw/a" && k != "pw/b" || seen[k] {
				t.Fatalf("initial event for %q (seen %v)", k, seen)
			}
			seen[string(r.ev.Key)] = true
		}

		if _, err := other.Set(ctx, []byte("pw/a"), []byte("2"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := expectEvent(t, ch, runtime.EventSet, "pw/a"); string(ev.Value) != "2" {
			t.Fatalf("Set event %+v", ev)
		}
		if _, _, err := other.Del(ctx, []byte("pw/b"), runtime.DelOptions{}); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, ch, runtime.EventDelete, "pw/b")
		// A deleted key's registration goes with it.
		waitFor(t, "pw/b's registration to go", func() bool { return c.Stats().WatchedKeys == 1 })
	})
}

func TestWatchPatternFindsOtherClientsKeysAtARescan(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		put(t, env, "pw/seed", "s")
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		trigger := make(chan struct{})
		ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1, Trigger: trigger})
		expectEvent(t, ch, runtime.EventResync, "pw/seed") // the first listing is done

		if _, err := other.Set(ctx, []byte("pw/new"), []byte("n"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, []byte("elsewhere"), []byte("n"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case trigger <- struct{}{}:
		case <-ctx.Done():
			t.Fatal("the watch never took the trigger")
		}
		if ev := expectEvent(t, ch, runtime.EventSet, "pw/new"); !ev.Found || string(ev.Value) != "n" || ev.Version.IsZero() {
			t.Fatalf("found key's event %+v", ev)
		}
		// From then on it is watched like the others.
		if _, err := other.Set(ctx, []byte("pw/new"), []byte("n2"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := expectEvent(t, ch, runtime.EventSet, "pw/new"); string(ev.Value) != "n2" {
			t.Fatalf("later Set %+v", ev)
		}
	})
}

func TestWatchPatternPicksUpThisClientsWritesWithoutARescan(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		put(t, env, "pw/seed", "s")
		c := dial(t, env.url)
		ctx := testCtx(t)
		// No timer, no trigger: only the client's own Set can tell the watch.
		ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1})
		expectEvent(t, ch, runtime.EventResync, "pw/seed")
		if _, err := c.Set(ctx, []byte("pw/mine"), []byte("m"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := expectEvent(t, ch, runtime.EventSet, "pw/mine"); string(ev.Value) != "m" {
			t.Fatalf("own write %+v", ev)
		}
		if _, _, err := c.Del(ctx, []byte("pw/mine"), runtime.DelOptions{}); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, ch, runtime.EventDelete, "pw/mine")
		// Set again after its delete: found again.
		if _, err := c.Set(ctx, []byte("pw/mine"), []byte("again"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := expectEvent(t, ch, runtime.EventSet, "pw/mine"); string(ev.Value) != "again" {
			t.Fatalf("own write after delete %+v", ev)
		}
	})
}

func TestWatchPatternEndsWithTheQuotaError(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			env := b.start(t, servertest.WithOptions(func(o *server.Options) { o.Limits.MaxWatchesPerClient = 2 }))
			for _, k := range []string{"pw/1", "pw/2", "pw/3"} {
				put(t, env, k, "v")
			}
			c := dial(t, env.url)
			ch := watchPattern(t, testCtx(t), c, "pw/*", runtime.PatternWatchOptions{Rescan: -1})
			var last error
			for {
				r, ok := receiveOK(t, ch)
				if !ok {
					break
				}
				if r.err != nil {
					last = r.err
				}
			}
			if !errors.Is(last, runtime.ErrQuotaExceeded) {
				t.Fatalf("the watch ended with %v, want ErrQuotaExceeded", last)
			}
		})
	}
}

func TestWatchPatternResyncsAndRescansAfterAReconnect(t *testing.T) {
	b := brokertest.Start(t)
	srv := servertest.NewExternal(t, b.URL())
	env := &testEnv{url: b.URL(), srv: srv}
	put(t, env, "pw/a", "before")
	put(t, env, "pw/gone", "x")
	c := dial(t, env.url)
	ctx := testCtx(t)
	ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1})
	for range 2 { // the initial state, in either order
		if r, ok := receiveOK(t, ch); !ok || r.err != nil || r.ev.Kind != runtime.EventResync {
			t.Fatalf("initial state: %+v, %v (ended: %v)", r.ev, r.err, !ok)
		}
	}

	b.Stop()
	waitFor(t, "the client to notice", func() bool { return !c.Stats().Connected })
	// Changed while the client is away: only a Resync and a rescan can tell.
	put(t, env, "pw/a", "during")
	put(t, env, "pw/born", "new")
	if !srv.Engine().Delete([]byte("pw/gone")) {
		t.Fatal("pw/gone was not there to delete")
	}
	b.Restart()

	want := map[string]bool{"a": false, "born": false, "gone": false}
	for !want["a"] || !want["born"] || !want["gone"] {
		r, ok := receiveOK(t, ch)
		if !ok || r.err != nil {
			t.Fatalf("after the reconnect: %v (ended: %v)", r.err, !ok)
		}
		switch k := string(r.ev.Key); {
		case k == "pw/a" && r.ev.Kind == runtime.EventResync:
			if !r.ev.Found || string(r.ev.Value) != "during" {
				t.Fatalf("Resync %+v, want the value set during the outage", r.ev)
			}
			want["a"] = true
		case k == "pw/born" && r.ev.Kind == runtime.EventSet && string(r.ev.Value) == "new":
			want["born"] = true
		case k == "pw/gone" && r.ev.Kind == runtime.EventResync && !r.ev.Found:
			want["gone"] = true
		default:
			t.Fatalf("unexpected event %s %s %q", r.ev.Kind, k, r.ev.Value)
		}
	}
}

// Issue #25: a pattern watch cost about two goroutines per key (20,487
// goroutines for 12,000 keys). Now its keys are registered and read by a
// fixed few workers and delivered by one dispatcher: watching 2,000 keys
// adds a bounded number of goroutines, and changes still arrive.
func TestWatchPatternGoroutinesDoNotGrowWithKeys(t *testing.T) {
	env := backends[0].start(t)
	const n = 2000
	for i := range n {
		put(t, env, fmt.Sprintf("pw/%04d", i), "v")
	}
	c, other := dial(t, env.url), dial(t, env.url)
	ctx := testCtx(t)
	before := goruntime.NumGoroutine()
	ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1})
	seen := map[string]bool{}
	most := 0
	for len(seen) < n {
		r, ok := receiveOK(t, ch)
		if !ok || r.err != nil {
			t.Fatalf("initial state after %d keys: %v (ended: %v)", len(seen), r.err, !ok)
		}
		seen[string(r.ev.Key)] = true
		if len(seen)%100 == 0 {
			most = max(most, goruntime.NumGoroutine()-before)
		}
	}
	most = max(most, goruntime.NumGoroutine()-before)
	t.Logf("watching %d keys: at most %d goroutines more", n, most)
	// The workers, the test's ranging goroutine, and room for the
	// runtime's transient request goroutines; the old code had 2 per key.
	if most > 60 {
		t.Fatalf("%d goroutines more while watching %d keys, want a bound independent of the keys", most, n)
	}
	if got := c.Stats().WatchedKeys; got != n {
		t.Fatalf("%d keys registered, want %d", got, n)
	}
	if _, err := other.Set(ctx, []byte("pw/1234"), []byte("w"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := expectEvent(t, ch, runtime.EventSet, "pw/1234"); string(ev.Value) != "w" {
		t.Fatalf("Set event %+v", ev)
	}
}

// A pattern watch stops at MaxKeys (DefaultPatternMaxKeys unless set):
// one key more, listed or written by this client, ends it with
// ErrWatchLimit, and its registrations go.
func TestWatchPatternEndsWithErrWatchLimit(t *testing.T) {
	env := backends[0].start(t)
	for i := range 5 {
		put(t, env, fmt.Sprintf("pw/%d", i), "v")
	}
	c := dial(t, env.url)
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		max  int
		set  string // a key this client sets once the listing is watched
	}{
		{name: "listing", max: 4},
		{name: "own write", max: 5, set: "pw/9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := watchPattern(t, ctx, c, "pw/*", runtime.PatternWatchOptions{Rescan: -1, MaxKeys: tc.max})
			if tc.set != "" {
				for seen := map[string]bool{}; len(seen) < 5; {
					r, ok := receiveOK(t, ch)
					if !ok || r.err != nil || r.ev.Kind != runtime.EventResync {
						t.Fatalf("initial state: %+v, %v (ended: %v)", r.ev, r.err, !ok)
					}
					seen[string(r.ev.Key)] = true
				}
				if _, err := c.Set(ctx, []byte(tc.set), []byte("v"), runtime.SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var last error
			for {
				r, ok := receiveOK(t, ch)
				if !ok {
					break
				}
				if r.err != nil {
					last = r.err
				}
			}
			if !errors.Is(last, runtime.ErrWatchLimit) {
				t.Fatalf("the watch ended with %v, want ErrWatchLimit", last)
			}
			waitFor(t, "the registrations to go", func() bool { return c.Stats().WatchedKeys == 0 })
		})
	}
	if runtime.DefaultPatternMaxKeys > server.DefaultMaxWatchesPerClient {
		t.Fatalf("DefaultPatternMaxKeys %d is above the server's default quota %d", runtime.DefaultPatternMaxKeys, server.DefaultMaxWatchesPerClient)
	}
}
