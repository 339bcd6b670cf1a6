package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	pahopackets "github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// slowDeparture holds the end of the first session of a client id where
// mochi has decided to end it but not yet removed the id from its table
// (it calls OnUnsubscribed in between), until the test says so or a bound
// passes: the window a reconnecting device can hit.
type slowDeparture struct {
	mqtt.HookBase
	id      string
	held    atomic.Bool
	leaving chan struct{} // closed when the old connection is in the window
	release chan struct{} // closed by the test
}

func (h *slowDeparture) ID() string { return "slow-departure" }

func (h *slowDeparture) Provides(b byte) bool { return b == mqtt.OnUnsubscribed }

func (h *slowDeparture) OnUnsubscribed(cl *mqtt.Client, _ packets.Packet) {
	if cl.ID != h.id {
		return
	}
	if !h.held.CompareAndSwap(false, true) {
		return // later calls (the takeover's) pass
	}
	close(h.leaving)
	select {
	case <-h.release:
	case <-time.After(500 * time.Millisecond):
	}
}

// A client that reconnects with its id while its previous connection is
// still ending its session keeps its new subscriptions: mochi's cleanup of
// the old connection no longer deletes the new one (awaitDeparture).
func TestAReconnectWithTheSameIDKeepsItsSubscriptions(t *testing.T) {
	srv, err := New(Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hook := &slowDeparture{id: "A4C138F0E1D2", leaving: make(chan struct{}), release: make(chan struct{})}
	if err := srv.tr.(*embedded).broker.AddHook(hook, nil); err != nil {
		t.Fatal(err)
	}

	first, _ := dialClient(t, srv.Addr(), hook.id)
	subscribe(t, first, "app/config")
	_ = first.Disconnect(&paho.Disconnect{})
	waitClosed(t, hook.leaving, "the first connection's disconnect")

	second, got := dialClient(t, srv.Addr(), hook.id)
	subscribe(t, second, "app/config")
	close(hook.release) // the old connection ends its session now

	pub, _ := dialClient(t, srv.Addr(), "publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pub.Publish(ctx, &paho.Publish{Topic: "app/config", QoS: 1, Payload: []byte("v2")}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if !bytes.Equal(p.Payload, []byte("v2")) {
			t.Fatalf("payload %q", p.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reconnected client lost its subscription to the old connection's cleanup")
	}
}

func dialClient(t *testing.T, addr, id string) (*paho.Client, <-chan *paho.Publish) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *paho.Publish, 8)
	c := paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     pahopackets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			select {
			case got <- pr.Packet:
			default:
			}
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatalf("connect %s: %v", id, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	return c, got
}

func subscribe(t *testing.T, c *paho.Client, filter string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}}); err != nil {
		t.Fatalf("subscribe %s: %v", filter, err)
	}
}
