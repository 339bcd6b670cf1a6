package runtime

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// These tests drive the runtime's reconnect, resubscribe and resync paths
// through the real server's fault injection (ssgen serve
// --fault-injection): the runtime puts the fault properties on one request
// of its own, and the server disconnects it.

// faultOn returns a requestProps that adds props to every request whose
// payload contains marker.
func faultOn(marker string, props ...string) func([]byte) []paho.UserProperty {
	var up []paho.UserProperty
	for i := 0; i+1 < len(props); i += 2 {
		up = append(up, paho.UserProperty{Key: props[i], Value: props[i+1]})
	}
	return func(payload []byte) []paho.UserProperty {
		if bytes.Contains(payload, []byte(marker)) {
			return up
		}
		return nil
	}
}

func dialFaulty(t *testing.T, url, id string, props func([]byte) []paho.UserProperty) *Client {
	t.Helper()
	cfg, err := FromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = id
	cfg.ReconnectMin, cfg.ReconnectMax = 10*time.Millisecond, 50*time.Millisecond
	cfg.requestProps = props
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestInjectedDisconnectFailsTheRequestAndTheClientReconnects(t *testing.T) {
	srv := servertest.New(t, servertest.WithFaultInjection())
	c := dialFaulty(t, srv.URL(), "fault-reconnect",
		faultOn("boom", protocol.FaultDisconnect, "152", protocol.FaultRequestID, "boom-1"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The server disconnects before deciding the request: it fails as
	// lost (never resent after the reconnect) and stores nothing.
	_, err := c.Set(ctx, []byte("boom"), []byte("v"), SetOptions{})
	if !errors.Is(err, ErrConnectionLost) || !IsRetryable(err) {
		t.Fatalf("Set: %v, want ErrConnectionLost", err)
	}
	if _, ok := srv.Engine().Lookup([]byte("boom")); ok {
		t.Fatal("the disconnected request was processed")
	}
	// The client reconnects by itself; the caller's retry of the same
	// request (same fault:requestid) goes through.
	if _, err := c.Set(ctx, []byte("boom"), []byte("v"), SetOptions{}); err != nil {
		t.Fatalf("retry after the reconnect: %v", err)
	}
	if st := c.Stats(); st.Reconnects < 1 || st.ConnLost < 1 {
		t.Fatalf("stats %+v, want a reconnect and a lost request", st)
	}
}

func TestInjectedDisconnectResyncsWatchers(t *testing.T) {
	srv := servertest.New(t, servertest.WithFaultInjection())
	var armed atomic.Bool
	// A delay of 1 s, as the SDK tests use: with 0 the DISCONNECT follows
	// the answer so closely that paho may end the connection before its
	// callback has handed the answer over.
	props := faultOn("kick", protocol.FaultDisconnect, "152", protocol.FaultDelay, "1")
	c := dialFaulty(t, srv.URL(), "fault-watcher", func(p []byte) []paho.UserProperty {
		if armed.Load() {
			return props(p)
		}
		return nil
	})
	other := dialFaulty(t, srv.URL(), "fault-writer", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := make(chan Event, 16)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	registered := make(chan struct{})
	go func() {
		defer close(events)
		for ev, err := range c.WatchWith(wctx, []byte("w"), WatchOptions{Current: true}) {
			if err != nil {
				return
			}
			if ev.Kind == EventResync && !ev.Found {
				select {
				case <-registered:
				default:
					close(registered) // the first event: the registration is in place
					continue
				}
			}
			events <- ev
		}
	}()
	next := func() Event {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the watch ended")
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no watch event")
			return Event{}
		}
	}
	<-registered
	if _, err := other.Set(ctx, []byte("w"), []byte("1"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Kind != EventSet || string(ev.Value) != "1" {
		t.Fatalf("event %+v, want Set 1", ev)
	}
	// A request answered, then the connection cut a second later.
	armed.Store(true)
	if _, err := c.Set(ctx, []byte("kick"), []byte("x"), SetOptions{}); err != nil {
		t.Fatalf("the request before the delayed disconnect: %v", err)
	}
	armed.Store(false)
	// After the reconnect the watcher resyncs with the key's value, and
	// the registration is back: later changes arrive as before.
	ev := next()
	for ev.Kind == EventSet { // a change racing the cut may come first
		ev = next()
	}
	if ev.Kind != EventResync || string(ev.Value) != "1" {
		t.Fatalf("event %+v, want Resync 1", ev)
	}
	if _, err := other.Set(ctx, []byte("w"), []byte("2"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Kind != EventSet || string(ev.Value) != "2" {
		t.Fatalf("event %+v after the resync, want Set 2", ev)
	}
	if st := c.Stats(); st.Reconnects < 1 || st.Resyncs < 1 {
		t.Fatalf("stats %+v, want a reconnect and a resync", st)
	}
}

// The runtime's typed errors for what chaos rules inject: a service error
// by its sentinel, a dropped answer as a timeout, a held answer as an
// answer.
func TestChaosRulesReachTheRuntimeAsTypedErrors(t *testing.T) {
	srv := servertest.New(t, servertest.WithChaos(
		server.ChaosRule{Key: "full", Effect: server.ChaosError, Error: protocol.ErrQuotaExceeded},
		server.ChaosRule{Key: "lost", Effect: server.ChaosDrop},
		server.ChaosRule{Key: "slow", Effect: server.ChaosDelay, Delay: server.Duration(20 * time.Millisecond)},
	))
	c := dialFaulty(t, srv.URL(), "chaos-typed", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Set(ctx, []byte("full"), []byte("v"), SetOptions{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("Set under an error rule: %v, want ErrQuotaExceeded", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	if _, _, err := c.Get(short, []byte("lost")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Get under a drop rule: %v, want ErrTimeout", err)
	}
	if _, err := c.Set(ctx, []byte("slow"), []byte("v"), SetOptions{}); err != nil {
		t.Fatalf("Set under a delay rule: %v", err)
	}
}
