package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// closeWithin closes c and fails the test if Close does not return in d.
func closeWithin(t *testing.T, c *runtime.Client, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

// Close returns, and fails the calls in flight with ErrClosed, even when
// the network swallows everything (the DISCONNECT can never be delivered).
func TestCloseOverABlackHole(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	cfg := config(t, p.Addr(), "close-hole")
	cfg.Timeout = 30 * time.Second
	c := dial(t, cfg)
	p.Blackhole()
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			_, _, err := c.Get(context.Background(), []byte("k"))
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond)
	closeWithin(t, c, slack)
	for range 5 {
		select {
		case err := <-errs:
			if !errors.Is(err, runtime.ErrClosed) {
				t.Errorf("call in flight at Close: %v, want ErrClosed", err)
			}
		case <-time.After(slack):
			t.Fatal("a call in flight outlived Close")
		}
	}
}

// Close returns while the client is between connection attempts to a
// broker that refuses them, and so does a call waiting for a connection.
func TestCloseWhileReconnecting(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	cfg := config(t, p.Addr(), "close-reconnecting")
	cfg.Timeout = 30 * time.Second
	c := dial(t, cfg)
	p.Refuse(true)
	p.Cut()
	waitFor(t, "the disconnect", func() bool { return !c.Stats().Connected })
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), []byte("k"))
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond) // a few refused attempts
	closeWithin(t, c, slack)
	select {
	case err := <-errc:
		if !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("call waiting for a connection: %v, want ErrClosed", err)
		}
	case <-time.After(slack):
		t.Fatal("a call waiting for a connection outlived Close")
	}
}

// Dial to a broker that accepts TCP and then closes every connection gives
// up within its connect timeout with an error, instead of retrying forever.
func TestDialGivesUpOnARefusingBroker(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	p.Refuse(true)
	cfg := config(t, p.Addr(), "dial-refused")
	cfg.ConnectTimeout = time.Second
	start := time.Now()
	c, err := runtime.Dial(context.Background(), cfg)
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded through a proxy refusing every connection")
	}
	if took := time.Since(start); took > cfg.ConnectTimeout+slack {
		t.Fatalf("Dial took %v with a %v connect timeout", took, cfg.ConnectTimeout)
	}
	if p.Accepted() < 2 {
		t.Fatalf("Dial tried %d times; it should retry a transient refusal", p.Accepted())
	}
}
