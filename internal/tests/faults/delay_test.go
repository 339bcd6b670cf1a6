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

// A network slower than the request timeout makes calls time out, each
// within its timeout, never later; the answers that arrive afterwards are
// dropped and counted, and the client is fine once the network is.
func TestSlowNetworkTimesOutWithinTheTimeout(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	cfg := config(t, p.Addr(), "slow")
	cfg.Timeout = 500 * time.Millisecond
	c := dial(t, cfg)
	p.SetDelay(time.Second)
	const n = 10
	errs := make(chan error, n)
	for range n {
		go func() {
			start := time.Now()
			_, err := c.Set(context.Background(), []byte("k"), []byte("v"), runtime.SetOptions{})
			if took := time.Since(start); took > cfg.Timeout+slack {
				t.Errorf("call took %v with a %v timeout", took, cfg.Timeout)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; !errors.Is(err, runtime.ErrTimeout) || !runtime.IsRetryable(err) {
			t.Errorf("call over a slow network: %v, want a retryable ErrTimeout", err)
		}
	}
	p.SetDelay(0)
	waitFor(t, "the late answers", func() bool { return c.Stats().LateResponses > 0 })
	settle(t, []*runtime.Client{c})
	if s := c.Stats(); s.InFlight != 0 || s.Timeouts < n {
		t.Fatalf("Stats %+v: want %d timeouts, nothing in flight", s, n)
	}
}
