package faults

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// A cut connection fails the requests in flight on it at once, with a
// retryable error, instead of letting them wait for their timeout; the
// next requests go over the new connection.
func TestCutFailsInFlightRequestsPromptly(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	cfg := config(t, p.Addr(), "cut-inflight")
	cfg.Timeout = 30 * time.Second // a call that waited for its timeout would show
	c := dial(t, cfg)
	if _, err := c.Set(context.Background(), []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Hold every byte a while so that requests are surely in flight when
	// the connection goes.
	p.SetDelay(300 * time.Millisecond)
	const n = 20
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			start := time.Now()
			var err error
			if i%2 == 0 {
				_, _, err = c.Get(context.Background(), []byte("k"))
			} else {
				_, err = c.Set(context.Background(), fmt.Appendf(nil, "k%d", i), []byte("v"), runtime.SetOptions{})
			}
			results <- result{err, time.Since(start)}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	p.SetDelay(0)
	p.Cut()
	lost := 0
	for range n {
		r := <-results
		switch {
		case r.err == nil:
		case runtime.IsRetryable(r.err):
			lost++
		default:
			t.Errorf("in-flight call failed with a non-retryable error: %v", r.err)
		}
		if r.took > slack {
			t.Errorf("in-flight call returned after %v (timeout 30 s): it waited instead of failing", r.took)
		}
	}
	if lost == 0 {
		t.Log("every in-flight call completed before the cut (no failure to check)")
	}
	settle(t, []*runtime.Client{c})
	if _, _, err := c.Get(context.Background(), []byte("k")); err != nil {
		t.Fatalf("after reconnect: %v", err)
	}
	if s := c.Stats(); s.Reconnects == 0 || s.InFlight != 0 {
		t.Fatalf("Stats %+v: want a reconnect and nothing in flight", s)
	}
	t.Logf("%d calls in flight at the cut: %d failed retryably, %d completed", n, lost, n-lost)
}

// Cutting the connection again and again while requests run never makes a
// call hang, and the client serves again once the cuts stop.
func TestReconnectStorm(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	var clients []*runtime.Client
	for i := range 3 {
		clients = append(clients, dial(t, config(t, p.Addr(), fmt.Sprintf("storm-%d", i))))
	}
	st := &tally{}
	stop := make(chan struct{})
	wg := load(t, clients, 2*time.Second, nil, nil, nil, st, stop)
	const cuts = 15
	for range cuts {
		time.Sleep(80 * time.Millisecond)
		p.Cut()
	}
	close(stop)
	wg.Wait()
	settle(t, clients)
	var reconnects uint64
	for _, c := range clients {
		reconnects += c.Stats().Reconnects
	}
	t.Logf("%d cuts, %d reconnects: %v", cuts, reconnects, st)
	for _, h := range st.hung {
		t.Errorf("hung: %s", h)
	}
	if st.ok == 0 || reconnects == 0 {
		t.Fatalf("storm did nothing: %d reconnects, %v", reconnects, st)
	}
}

// Two clients with the same id take the session from each other on every
// connect. They must back off rather than ping-pong at full speed: over a
// window the number of connection attempts stays small.
func TestClientIDCollisionBacksOff(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	var clients []*runtime.Client
	var wg sync.WaitGroup
	for range 2 {
		cfg := config(t, p.Addr(), "same-id")
		cfg.ReconnectMax = time.Second
		clients = append(clients, dial(t, cfg))
	}
	const window = 3 * time.Second
	start := p.Accepted()
	// Requests during the fight must still return in bounded time.
	st := &tally{}
	stop := make(chan struct{})
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				t0 := time.Now()
				_, _, err := c.Get(context.Background(), []byte("k"))
				st.add(err, time.Since(t0), 2*time.Second+slack, "GET")
			}
		}()
	}
	time.Sleep(window)
	close(stop)
	wg.Wait()
	attempts := p.Accepted() - start
	var reconnects uint64
	for _, c := range clients {
		reconnects += c.Stats().Reconnects
	}
	t.Logf("same client id, %v window: %d connection attempts, %d reconnects; %v", window, attempts, reconnects, st)
	// Without backoff the pair reconnects thousands of times in 3 s; with
	// it, each settles near one attempt per ReconnectMax.
	const bound = 40
	if attempts > bound {
		t.Errorf("%d connection attempts in %v with a shared client id: the clients ping-pong (bound %d)", attempts, window, bound)
	}
	for _, h := range st.hung {
		t.Errorf("hung: %s", h)
	}
}
