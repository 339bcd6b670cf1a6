package server_test

import (
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/server"
)

// A client that sends Request Problem Information = 0 (paho.golang does
// whenever CONNECT has properties and the flag is left false, as the
// runtime's does) still gets user properties on the PUBLISHes it receives:
// MQTT 5 limits the flag to other packets, and without __stat every
// response would be refused.
func TestUserPropertiesSurviveRequestProblemInfoZero(t *testing.T) {
	e := newEnv(t, "", nil)
	u, err := url.Parse(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *paho.Publish, 1)
	pc := paho.NewClient(paho.ClientConfig{
		ClientID: "rpi-zero",
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			select {
			case got <- pr.Packet:
			default:
			}
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := pc.Connect(ctx, &paho.Connect{ClientID: "rpi-zero", CleanStart: true,
		Properties: &paho.ConnectProperties{RequestProblemInfo: false}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Disconnect(&paho.Disconnect{}) })
	const respTopic = "clients/rpi-zero/test/response"
	if _, err := pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: respTopic, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Publish(ctx, &paho.Publish{
		Topic: server.RequestTopic, QoS: 1, Payload: cmd("GET", "k"),
		Properties: &paho.PublishProperties{ResponseTopic: respTopic, CorrelationData: []byte("0123456789abcdef"),
			User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}}},
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if stat := props(t, p)["__stat"]; stat != "200" {
			t.Fatalf("__stat = %q, want 200 (user properties: %v)", stat, p.Properties.User)
		}
	case <-ctx.Done():
		t.Fatal("no response")
	}
}
