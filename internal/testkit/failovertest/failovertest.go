// Package failovertest checks what a state store keeps across a failover
// (a leader killed, a standby taking over): Before writes kept and fenced
// keys through the broker and registers a watcher, and Check.After, once
// another instance leads, checks every acknowledged write with its exact
// version, that versions only grow, that an older fencing token is
// refused, and that the watcher registered on the old leader hears of the
// new one's changes.
package failovertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// Watched is the key the watcher is registered for.
const Watched = "watched"

// Check is what Before wrote, for After.
type Check struct {
	Watcher *runtime.Client // registered for Watched (KEYNOTIFY) on the old leader
	t       testing.TB
	ctx     context.Context
	client  *runtime.Client
	fence   hlc.HLC
	acked   map[string]hlc.HLC
	top     hlc.HLC
	events  chan runtime.Event
}

// Before registers a watcher for Watched and writes n keys through the
// broker at url, every other one with a fencing token, each acknowledged.
func Before(t testing.TB, url string, n int) *Check {
	t.Helper()
	c := &Check{t: t, ctx: clienttest.Context(t), Watcher: clienttest.Dial(t, url), events: make(chan runtime.Event, 16), acked: map[string]hlc.HLC{}}
	wctx, stop := context.WithCancel(c.ctx)
	t.Cleanup(stop)
	registered := make(chan struct{})
	go func() {
		for ev, err := range c.Watcher.WatchWith(wctx, []byte(Watched), runtime.WatchOptions{Current: true}) {
			switch {
			case err != nil:
			case ev.Kind == runtime.EventResync:
				close(registered)
			default:
				c.events <- ev
			}
		}
	}()
	select {
	case <-registered:
	case <-c.ctx.Done():
		t.Fatal("failovertest: the watch did not start")
	}
	c.client = clienttest.Dial(t, url)
	c.fence = hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "locker"}
	for i := range n {
		key := fmt.Sprintf("key%d", i)
		opts := runtime.SetOptions{}
		if i%2 == 0 {
			opts.FencingToken = c.fence
		}
		v, err := c.client.Set(c.ctx, []byte(key), []byte("v-"+key), opts)
		if err != nil {
			t.Fatal(err)
		}
		c.acked[key], c.top = v, v
	}
	return c
}

// After checks, through the broker, what a new leader must have kept.
func (c *Check) After() {
	t, ctx := c.t, c.ctx
	t.Helper()
	for key, v := range c.acked {
		got, gv, err := c.client.Get(ctx, []byte(key))
		if err != nil || string(got) != "v-"+key || gv != v {
			t.Fatalf("GET %s after the failover = %q %v %v, want version %v", key, got, gv, err, v)
		}
	}
	older := c.fence
	older.Wall--
	if _, err := c.client.Set(ctx, []byte("key0"), []byte("x"), runtime.SetOptions{FencingToken: older}); err == nil {
		t.Fatal("SET with an older fencing token accepted after the failover")
	}
	v, err := c.client.Set(ctx, []byte(Watched), []byte("after"), runtime.SetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Compare(c.top) <= 0 {
		t.Fatalf("version after the failover %v not after %v", v, c.top)
	}
	// The new leader first tells the watcher the key's state at the
	// takeover (a resync: absent), then the SET.
	for i, want := range []string{"DELETE", "SET after"} {
		select {
		case ev := <-c.events:
			got := "SET " + string(ev.Value)
			if ev.Kind == runtime.EventDelete {
				got = "DELETE"
			}
			if got != want {
				t.Fatalf("the watcher's event %d after the failover: %s, want %s", i, got, want)
			}
		case <-ctx.Done():
			t.Fatalf("the watcher registered on the old leader: no %s notification after the failover", want)
		}
	}
}
