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

// A SET whose caller was told the connection was lost must not be applied
// again later, after another client's acknowledged SET of the same key.
func TestFailedRequestIsNotReappliedAfterTheReconnect(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	cfg := config(t, p.Addr(), "redeliver-a")
	cfg.Timeout = 30 * time.Second
	a := dial(t, cfg)
	b := dial(t, config(t, srv.Addr(), "redeliver-b"))
	ctx := context.Background()
	p.SwallowReplies()
	errc := make(chan error, 1)
	go func() {
		_, err := a.Set(ctx, []byte("k"), []byte("stale"), runtime.SetOptions{})
		errc <- err
	}()
	waitFor(t, "A's SET to reach the service", func() bool {
		e, _ := srv.Engine().Lookup([]byte("k"))
		return string(e.Value) == "stale"
	})
	if _, err := b.Set(ctx, []byte("k"), []byte("newer"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Restore()
	if err := <-errc; err != nil && !errors.Is(err, runtime.ErrConnectionLost) {
		t.Fatalf("A's SET: %v", err)
	}
	settle(t, []*runtime.Client{a})
	time.Sleep(300 * time.Millisecond) // room for a redelivery to land
	if e, _ := srv.Engine().Lookup([]byte("k")); string(e.Value) != "newer" {
		t.Fatalf("k = %q: B's acknowledged SET was overwritten by A's SET re-applied after the reconnect", e.Value)
	}
}
