package runtime_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime"
)

// coreRawPeer is a bare paho client on the request topic standing in for
// the service, to see the bytes a request carries and to answer with
// envelopes the real service never sends.
type coreRawPeer struct {
	pc  *paho.Client
	got chan *paho.Publish
}

// coreRawResponder subscribes to the request topic on the broker at
// brokerURL. reply builds the answer to each request (nil: no answer);
// it runs outside paho's callback, so it may block.
func coreRawResponder(t *testing.T, brokerURL string, reply func(req *paho.Publish) *paho.Publish) *coreRawPeer {
	t.Helper()
	p := &coreRawPeer{got: make(chan *paho.Publish, 100)}
	p.pc = coreRawClient(t, brokerURL, "raw-peer", runtime.RequestTopic, func(pc *paho.Client, req *paho.Publish) {
		select {
		case p.got <- req:
		default:
		}
		if reply != nil {
			go func() {
				if resp := reply(req); resp != nil {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_, _ = pc.Publish(ctx, resp)
				}
			}()
		}
	})
	return p
}

// coreRawClient connects a bare paho client with id to the broker at
// brokerURL, subscribed at QoS 1 to topic, handing every PUBLISH it gets
// to received with the client (in paho's callback: it must not block; the
// first may come before coreRawClient returns). It disconnects when the
// test ends.
func coreRawClient(t testing.TB, brokerURL, id, topic string, received func(*paho.Client, *paho.Publish)) *paho.Client {
	t.Helper()
	u, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	var pc *paho.Client
	pc = paho.NewClient(paho.ClientConfig{
		Conn: nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			received(pc, pr.Packet)
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pc.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Disconnect(&paho.Disconnect{}) })
	if _, err := pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	return pc
}

// coreReply answers req with payload and the given user properties.
func coreReply(req *paho.Publish, payload string, user ...string) *paho.Publish {
	props := &paho.PublishProperties{CorrelationData: req.Properties.CorrelationData}
	for i := 0; i+1 < len(user); i += 2 {
		props.User = append(props.User, paho.UserProperty{Key: user[i], Value: user[i+1]})
	}
	return &paho.Publish{QoS: 1, Topic: req.Properties.ResponseTopic, Payload: []byte(payload), Properties: props}
}

func coreUser(p *paho.Publish, key string) (string, bool) {
	for _, u := range p.Properties.User {
		if u.Key == key {
			return u.Value, true
		}
	}
	return "", false
}
