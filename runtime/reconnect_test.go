package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestLostConnectionFailsInFlightRequestsPromptly(t *testing.T) {
	b := brokertest.Start(t)
	peer := coreRawResponder(t, b.URL(), nil) // receives, never answers
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute // a call that waited for its timeout would stall the test
	c := dialConfig(t, cfg)

	const n = 10
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, _, err := c.Get(context.Background(), fmt.Appendf(nil, "k%d", i))
			errs <- err
		}()
	}
	for range n {
		<-peer.got // every request reached the "service"
	}
	b.Stop()
	for range n {
		select {
		case err := <-errs:
			if !errors.Is(err, runtime.ErrConnectionLost) || !runtime.IsRetryable(err) {
				t.Errorf("in-flight request: %v, want ErrConnectionLost", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("an in-flight request outlived its connection")
		}
	}
	if s := c.Stats(); s.ConnLost != n || s.InFlight != 0 {
		t.Errorf("Stats = %+v, want %d ConnLost and nothing in flight", s, n)
	}
}

func TestReconnectUnderLoadAndWatchResync(t *testing.T) {
	b := brokertest.Start(t)
	srv := servertest.NewExternal(t, b.URL())
	cfg := testConfig(t, b.URL())
	// Short, so that a request the reattaching service loses (it can take
	// requests a moment before it can answer them) is retried well within
	// the test's patience.
	cfg.Timeout = 3 * time.Second
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	if _, err := c.Set(ctx, []byte("w"), []byte("before"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	w := coreWatch(t, c, "w", nil)
	coreSync(t, c, "w", w)

	// Load in flight while the broker dies and comes back.
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	stop := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				_, err := c.Set(context.Background(), fmt.Appendf(nil, "load%d", g), fmt.Appendf(nil, "%d", i), runtime.SetOptions{})
				kind := "ok"
				switch {
				case err == nil:
				case errors.Is(err, runtime.ErrConnectionLost):
					kind = "lost"
				case errors.Is(err, runtime.ErrTimeout):
					kind = "timeout"
				default:
					kind = err.Error()
				}
				if time.Since(start) > cfg.Timeout+time.Second {
					kind = "past its timeout"
				}
				mu.Lock()
				outcomes[kind]++
				mu.Unlock()
			}
		}()
	}
	waitFor(t, "load running", func() bool { return c.Stats().Requests > 50 })
	b.Stop()
	waitFor(t, "client notices", func() bool { return !c.Stats().Connected })
	// Changed while the client is away: only a Resync can tell.
	if err := srv.Engine().Put([]byte("w"), []byte("during outage"), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	b.Restart()
	waitFor(t, "client reconnects", func() bool { return c.Stats().Connected && c.Stats().Reconnects >= 1 })

	for {
		ev := w.next(t)
		if ev.Kind == runtime.EventResync {
			if !ev.Found || string(ev.Value) != "during outage" {
				t.Fatalf("Resync %+v, want the value set during the outage", ev)
			}
			break
		}
	}
	// The registration is back: changes are reported again.
	if _, err := c.Set(ctx, []byte("w"), []byte("after"), runtime.SetOptions{}); err != nil {
		t.Fatalf("Set after reconnect: %v", err)
	}
	for {
		ev := w.next(t)
		if ev.Kind == runtime.EventSet && string(ev.Value) == "after" {
			break
		}
	}
	close(stop)
	wg.Wait()
	for kind, n := range outcomes {
		if kind != "ok" && kind != "lost" && kind != "timeout" {
			t.Errorf("%d calls ended with %q", n, kind)
		}
	}
	if outcomes["ok"] == 0 {
		t.Error("no call succeeded")
	}
	t.Logf("outcomes %v, stats %+v", outcomes, c.Stats())
}

func TestClientIDTakeoverDoesNotStorm(t *testing.T) {
	url := brokertest.Mosquitto(t)
	cfg := testConfig(t, url)
	cfg.ClientID = "twin"
	cfg.ReconnectMin = 10 * time.Millisecond
	cfg.ReconnectMax = 200 * time.Millisecond
	a := dialConfig(t, cfg)
	b := dialConfig(t, cfg)
	time.Sleep(1500 * time.Millisecond)
	// Without backoff after a connect-then-drop the two would take the
	// session from each other thousands of times in 1.5 s.
	total := a.Stats().Connects + b.Stats().Connects
	if total > 60 {
		t.Fatalf("%d connections in 1.5 s: a reconnect storm", total)
	}
	t.Logf("%d connections in 1.5 s", total)
}

// The embedded server restarted on the same port is a new broker: the
// session is gone, so the client must subscribe again, and the watch must
// come back with a Resync of whatever the new store holds.
func TestEmbeddedServerRestartLosesTheSessionAndWatchResyncs(t *testing.T) {
	start := func(listen string, seed string) *server.Server {
		srv, err := server.New(server.Options{Listen: listen, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if seed != "" {
			if err := srv.Engine().Put([]byte("w"), []byte(seed), engine.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		return srv
	}
	srv := start("127.0.0.1:0", "")
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	w := coreWatch(t, c, "w", nil)
	coreSync(t, c, "w", w)

	addr := srv.Addr()
	_ = srv.Close()
	start(addr, "in the new store")
	waitFor(t, "client reconnects", func() bool { return c.Stats().Reconnects >= 1 && c.Stats().Connected })
	if c.Stats().SessionsLost == 0 {
		t.Error("the new broker's missing session went unnoticed")
	}
	for {
		ev := w.next(t)
		if ev.Kind == runtime.EventResync {
			if !ev.Found || string(ev.Value) != "in the new store" {
				t.Fatalf("Resync %+v", ev)
			}
			break
		}
	}
	// Responses and notifications flow again: the subscriptions were renewed.
	if _, err := c.Set(ctx, []byte("w"), []byte("after"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := w.next(t); ev.Kind != runtime.EventSet || string(ev.Value) != "after"; ev = w.next(t) {
	}
}

func TestManyWatchedKeysAllResyncAfterAReconnect(t *testing.T) {
	b := brokertest.Start(t)
	srv := servertest.NewExternal(t, b.URL())
	c := dial(t, b.URL())
	const n = 40
	ws := make([]*coreWatched, n)
	for i := range ws {
		ws[i] = coreWatch(t, c, fmt.Sprintf("key-%d", i), nil)
	}
	waitFor(t, "all registered", func() bool {
		for i := range n {
			if len(srv.Engine().Watchers(fmt.Appendf(nil, "key-%d", i))) != 1 {
				return false
			}
		}
		return true
	})
	b.Stop()
	waitFor(t, "client notices", func() bool { return !c.Stats().Connected })
	b.Restart()
	for i, w := range ws {
		for {
			ev := w.next(t)
			if ev.Kind == runtime.EventResync {
				if ev.Found {
					t.Errorf("key-%d: Resync found a value that was never set", i)
				}
				break
			}
		}
	}
	for i := range n {
		if got := srv.Engine().Watchers(fmt.Appendf(nil, "key-%d", i)); len(got) != 1 {
			t.Errorf("key-%d: registrations after reconnect %v", i, got)
		}
	}
}
