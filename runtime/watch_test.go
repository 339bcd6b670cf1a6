package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// coreWatched is a Watch iteration running in its own goroutine.
type coreWatched struct {
	events chan runtime.Event
	errs   chan error
	cancel context.CancelFunc
	done   chan struct{}
}

// coreWatch starts watching key. hold, if not nil, is waited on inside the
// loop body after every event: a slow consumer.
func coreWatch(t *testing.T, c *runtime.Client, key string, hold <-chan struct{}) *coreWatched {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &coreWatched{events: make(chan runtime.Event, 1000), errs: make(chan error, 10), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ev, err := range c.Watch(ctx, []byte(key)) {
			if err != nil {
				w.errs <- err
				continue
			}
			w.events <- ev
			if hold != nil {
				select {
				case <-hold:
				case <-ctx.Done():
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// next returns the next event, failing the test if none comes in time.
func (w *coreWatched) next(t *testing.T) runtime.Event {
	t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case err := <-w.errs:
		t.Fatalf("watch error: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10 s")
	}
	return runtime.Event{}
}

// coreSync sets key to fresh marker values until w reports one, so the
// test knows the registration is live; earlier events are discarded.
func coreSync(t *testing.T, c *runtime.Client, key string, ws ...*coreWatched) {
	t.Helper()
	ctx := testCtx(t)
	for _, w := range ws {
		for i := 0; ; i++ {
			if i == 200 {
				t.Fatal("watch never saw a marker Set")
			}
			marker := fmt.Sprintf("sync-%d", i)
			if _, err := c.Set(ctx, []byte(key), []byte(marker), runtime.SetOptions{}); err != nil {
				t.Fatal(err)
			}
			seen := false
			timeout := time.After(50 * time.Millisecond)
		drain:
			for {
				select {
				case ev := <-w.events:
					if ev.Kind == runtime.EventSet && string(ev.Value) == marker {
						seen = true
						break drain
					}
				case <-timeout:
					break drain
				}
			}
			if seen {
				break
			}
		}
	}
}

func TestWatchReportsSetsDeletesAndExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		clock := engine.NewFakeClock(time.Now())
		env := b.start(t, servertest.WithOptions(func(o *server.Options) { o.Now = clock.Now }))
		url, srv := env.url, env.srv
		c := dial(t, url)
		ctx := testCtx(t)
		w := coreWatch(t, c, "k", nil)
		coreSync(t, c, "k", w)

		ver, err := c.Set(ctx, []byte("k"), []byte("v1"), runtime.SetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ev := w.next(t); ev.Kind != runtime.EventSet || string(ev.Value) != "v1" || string(ev.Key) != "k" || ev.Version != ver || !ev.Found {
			t.Fatalf("after Set: %+v, want Set v1 at %v", ev, ver)
		}
		if _, _, err := c.Del(ctx, []byte("k"), runtime.DelOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := w.next(t); ev.Kind != runtime.EventDelete || ev.Found {
			t.Fatalf("after Del: %+v, want Delete", ev)
		}
		if _, err := c.Set(ctx, []byte("k"), []byte("v2"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		w.next(t)
		if _, _, err := c.VDel(ctx, []byte("k"), []byte("v2"), runtime.DelOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := w.next(t); ev.Kind != runtime.EventDelete {
			t.Fatalf("after VDel: %+v, want Delete", ev)
		}

		// Expiry notifies like a delete.
		if _, err := c.Set(ctx, []byte("k"), []byte("short"), runtime.SetOptions{TTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		w.next(t)
		clock.Advance(2 * time.Second)
		srv.Engine().Expire()
		ev := w.next(t)
		if ev.Kind != runtime.EventDelete {
			t.Fatalf("after expiry: %+v, want Delete", ev)
		}
		// The expiry was stamped by a service clock 2 s ahead of ours: the
		// notification's __ts was merged into the client clock.
		if ev.Version.IsZero() || c.Clock().Last().Compare(ev.Version) <= 0 {
			t.Errorf("client clock %v did not merge the notification's %v", c.Clock().Last(), ev.Version)
		}
	})
}

func TestWatchersOfOneKeyShareOneRegistration(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		env := b.start(t)
		url, srv := env.url, env.srv
		c := dial(t, url)
		ctx := testCtx(t)
		w1 := coreWatch(t, c, "shared", nil)
		coreSync(t, c, "shared", w1)

		before := c.Stats().Requests
		w2 := coreWatch(t, c, "shared", nil)
		waitFor(t, "two watchers", func() bool { return c.Stats().Watchers == 2 })
		if _, err := c.Set(ctx, []byte("shared"), []byte("both"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []*coreWatched{w1, w2} {
			if ev := w.next(t); string(ev.Value) != "both" {
				t.Fatalf("watcher got %+v", ev)
			}
		}
		if sent := c.Stats().Requests - before; sent != 1 {
			t.Errorf("%d requests for a second watcher and one Set, want 1 (no second KEYNOTIFY)", sent)
		}
		if s := c.Stats(); s.WatchedKeys != 1 {
			t.Errorf("WatchedKeys = %d, want 1", s.WatchedKeys)
		}
		if got := srv.Engine().Watchers([]byte("shared")); len(got) != 1 || got[0] != c.ClientID() {
			t.Errorf("service registrations %v, want just %s", got, c.ClientID())
		}

		// The first watcher leaving keeps the registration for the second.
		w1.cancel()
		<-w1.done
		if _, err := c.Set(ctx, []byte("shared"), []byte("second only"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ev := w2.next(t); string(ev.Value) != "second only" {
			t.Fatalf("remaining watcher got %+v", ev)
		}
		// The last one takes it away: KEYNOTIFY STOP.
		w2.cancel()
		<-w2.done
		waitFor(t, "registration removed", func() bool {
			return len(srv.Engine().Watchers([]byte("shared"))) == 0 && c.Stats().WatchedKeys == 0
		})
	})
}

func TestSlowWatcherGetsResyncWithoutStallingOthers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		cfg := testConfig(t, url)
		cfg.WatchBuffer = 4
		c := dialConfig(t, cfg)
		ctx := testCtx(t)
		fast := coreWatch(t, c, "hot", nil)
		hold := make(chan struct{})
		slow := coreWatch(t, c, "hot", hold)
		coreSync(t, c, "hot", fast)
		waitFor(t, "slow watcher blocked in its loop body", func() bool { return len(slow.events) > 0 })

		const n = 40
		for i := range n {
			if _, err := c.Set(ctx, []byte("hot"), fmt.Appendf(nil, "v%d", i), runtime.SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The fast watcher reaches the last value while the slow one is
		// still stuck in its first event.
		last := fmt.Sprintf("v%d", n-1)
		for {
			ev := fast.next(t)
			if string(ev.Value) == last {
				break
			}
		}
		if c.Stats().Overflows == 0 {
			t.Fatal("the slow watcher's buffer never overflowed")
		}
		// Released, the slow watcher skips what it missed: a Resync with
		// the current value.
		close(hold)
		for {
			ev := slow.next(t)
			if ev.Kind == runtime.EventResync {
				if !ev.Found || string(ev.Value) != last {
					t.Fatalf("Resync %+v, want the last value %s", ev, last)
				}
				break
			}
		}
		if c.Stats().Resyncs == 0 {
			t.Error("Stats().Resyncs = 0")
		}
	})
}

func TestWatchCurrentStartsFromTheKeysState(t *testing.T) {
	url := backends[0].start(t).url
	c := dial(t, url)
	ctx := testCtx(t)
	ver, err := c.Set(ctx, []byte("present"), []byte("v"), runtime.SetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range c.WatchWith(ctx, []byte("present"), runtime.WatchOptions{Current: true}) {
		if err != nil || ev.Kind != runtime.EventResync || !ev.Found || string(ev.Value) != "v" || ev.Version != ver {
			t.Fatalf("first event %+v, %v; want Resync of v at %v", ev, err, ver)
		}
		break
	}
	for ev, err := range c.WatchWith(ctx, []byte("absent"), runtime.WatchOptions{Current: true}) {
		if err != nil || ev.Kind != runtime.EventResync || ev.Found {
			t.Fatalf("first event %+v, %v; want Resync of nothing", ev, err)
		}
		break
	}
	waitFor(t, "both registrations removed", func() bool { return c.Stats().WatchedKeys == 0 })
}

func TestWatchOfAnEmptyKeyIsAnArgumentError(t *testing.T) {
	url := backends[0].start(t).url
	c := dial(t, url)
	for _, err := range c.Watch(testCtx(t), nil) {
		if !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("err = %v, want ErrInvalidArgument", err)
		}
	}
}

func TestWatchEndsWhenTheClientCloses(t *testing.T) {
	url := backends[0].start(t).url
	c := dial(t, url)
	w := coreWatch(t, c, "k", nil)
	coreSync(t, c, "k", w)
	_ = c.Close()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch still running after Close")
	}
	if _, _, err := c.Get(context.Background(), []byte("k")); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
}
