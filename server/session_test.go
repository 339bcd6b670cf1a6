package server_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// sdkClient connects the way the official Go SDK does (docs/wire-protocol.md#sessions):
// Clean Start false even the first time, Session Expiry 0xFFFFFFFF,
// Receive Maximum 65535, a metriccategory user property.
func sdkClient(t *testing.T, addr, id string, got chan<- *paho.Publish) (*paho.Client, net.Conn, *paho.Connack) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			got <- pr.Packet
			return true, nil
		}},
	})
	expiry := uint32(0xFFFFFFFF)
	recvMax := uint16(65535)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: false, KeepAlive: 30, Properties: &paho.ConnectProperties{
		SessionExpiryInterval: &expiry, ReceiveMaximum: &recvMax,
		User: paho.UserProperties{{Key: "metriccategory", Value: "aiosdk-go"}},
	}})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c, conn, ack
}

func TestEmbeddedBrokerKeepsSDKSessionsAcrossDroppedConnections(t *testing.T) {
	srv := servertest.New(t)
	u, _ := url.Parse(srv.URL())
	const id = "sdk-like"
	respTopic := "clients/" + id + "/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response"
	got := make(chan *paho.Publish, 16)
	ask := func(c *paho.Client, corr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if _, err := c.Publish(ctx, &paho.Publish{QoS: 1, Topic: server.RequestTopic, Payload: cmd("GET", "k"),
			Properties: &paho.PublishProperties{ResponseTopic: respTopic, CorrelationData: []byte(corr),
				User: paho.UserProperties{{Key: "__srcId", Value: id}, {Key: "__protVer", Value: "1.0"}}}}); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case p := <-got:
				// An earlier response whose PUBACK the dropped connection
				// lost comes again from the session: fine, skip it.
				if string(p.Properties.CorrelationData) == corr {
					return
				}
			case <-time.After(wait):
				t.Fatal("no response")
			}
		}
	}

	c, conn, ack := sdkClient(t, u.Host, id, got)
	if ack.SessionPresent {
		t.Fatal("session present on the first connection")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: respTopic, QoS: 1, NoLocal: true}}}); err != nil {
		t.Fatal(err)
	}
	ask(c, "0123456789abcdef")

	conn.Close() // the network drops; no DISCONNECT
	waitDone(t, c)
	c2, _, ack := sdkClient(t, u.Host, id, got)
	if !ack.SessionPresent {
		t.Fatal("session lost with the connection")
	}
	// No new SUBSCRIBE: the session's subscription still routes responses.
	ask(c2, "fedcba9876543210")

	zero := uint32(0)
	_ = c2.Disconnect(&paho.Disconnect{Properties: &paho.DisconnectProperties{SessionExpiryInterval: &zero}})
}

// Attached to a broker that restarts, the service reconnects, subscribes
// again and serves from the same store.
func TestExternalModeReconnectsAfterBrokerRestart(t *testing.T) {
	b := brokertest.Start(t)
	e := newEnv(t, b.URL(), nil)
	c := e.connect("before")
	checkResponse(t, c.do("SET", "k", "kept"), "+OK\r\n", true)

	b.Restart()
	waitDone(t, c.pc)
	c = e.connect("after")
	var got *paho.Publish
	waitFor(t, "the service to answer after the broker restarted", func() bool {
		corr := c.send(request{payload: cmd("GET", "k")})
		select {
		case p := <-c.resp:
			// An answer to an earlier attempt: ask again to stay in step.
			if string(p.Properties.CorrelationData) == string(corr) {
				got = p
				return true
			}
		case <-time.After(200 * time.Millisecond):
		}
		return false
	})
	checkResponse(t, got, "$4\r\nkept\r\n", true)
}

func waitDone(t *testing.T, c *paho.Client) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("the client did not notice its connection ended")
	}
}
