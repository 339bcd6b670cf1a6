package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/server"
)

// docs/wire-protocol.md#requests and #responses: the RPC envelope around the state store.
func TestEnvelope(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("envelope")
		t.Run("missing correlation data is a 400 naming it", func(t *testing.T) {
			c.t = t
			c.send(request{payload: cmd("GET", "k"), noCorr: true})
			p := c.await()
			m := props(t, p)
			if m["__stat"] != "400" || m["__propName"] != "Correlation Data" || m["__stMsg"] == "" || m["__protVer"] != "1.0" {
				t.Fatalf("user properties %v", m)
			}
			if len(p.Payload) == 0 || len(p.Properties.CorrelationData) != 0 {
				t.Fatalf("payload %q, correlation data %x", p.Payload, p.Properties.CorrelationData)
			}
		})
		t.Run("unsupported major version is a 505", func(t *testing.T) {
			c.t = t
			p := c.roundTrip(request{payload: cmd("GET", "k"), user: paho.UserProperties{
				{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "2.0"},
			}})
			m := props(t, p)
			if m["__stat"] != "505" || m["__supProtMajVer"] != "1" || m["__stMsg"] == "" || m["__protVer"] != "1.0" {
				t.Fatalf("user properties %v", m)
			}
			if len(p.Payload) == 0 {
				t.Fatal("empty payload")
			}
		})
		t.Run("missing version means 1.0", func(t *testing.T) {
			c.t = t
			p := c.roundTrip(request{payload: cmd("GET", "k"), user: paho.UserProperties{{Key: "__srcId", Value: c.id}}})
			checkResponse(t, p, "$-1\r\n", false)
		})
		t.Run("a later minor version is served", func(t *testing.T) {
			c.t = t
			p := c.roundTrip(request{payload: cmd("GET", "k"), user: paho.UserProperties{
				{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "1.7"}, {Key: "$partition", Value: c.id}, {Key: "$high_priority", Value: ""},
			}})
			checkResponse(t, p, "$-1\r\n", false)
		})
		t.Run("correlation data is echoed byte for byte", func(t *testing.T) {
			c.t = t
			corr := []byte{0, 1, 2, 0xff, 0xfe, 0, 0, 7}
			p := c.roundTrip(request{payload: cmd("GET", "k"), corr: corr})
			checkResponse(t, p, "$-1\r\n", false)
		})
		t.Run("no response topic: no response", func(t *testing.T) {
			c.t = t
			c.send(request{payload: cmd("SET", "nort", "v"), noRespTopic: true})
			c.expectNoResponse()
		})
		t.Run("QoS 0 request: dropped", func(t *testing.T) {
			c.t = t
			c.send(request{payload: cmd("SET", "qos0", "v"), qos0: true})
			c.expectNoResponse()
			if _, ok := e.srv.Engine().Lookup([]byte("qos0")); ok {
				t.Fatal("a QoS 0 request was executed")
			}
		})
		if !e.embedded {
			t.Run("external mode needs __srcId", func(t *testing.T) {
				c.t = t
				p := c.roundTrip(request{payload: cmd("GET", "k"), user: paho.UserProperties{{Key: "__protVer", Value: "1.0"}}})
				if m := props(t, p); m["__stat"] != "400" || m["__propName"] != "__srcId" {
					t.Fatalf("user properties %v", m)
				}
			})
		}
	})
}

var forbiddenResponseTopics = []struct{ name, topic string }{
	{"the request topic", server.RequestTopic},
	{"the notification space", server.NotifyPrefix + "/41/command/notify/6B"},
	{"the notification prefix itself", server.NotifyPrefix},
	{"a multi-level wildcard", "clients/x/#"},
	{"an empty level", "clients//response"},
	{"another client's topics", "clients/someone-else/response"},
	{"a $ topic", "$SYS/broker/clients/connected"},
}

// The real service disconnects a client that asks for a response on a
// forbidden topic; the embedded broker does the same.
func TestForbiddenResponseTopicDisconnectsTheClient(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, e *env) {
		for _, tc := range append(forbiddenResponseTopics, struct{ name, topic string }{"a single-level wildcard", "clients/+/response"}) {
			t.Run(tc.name, func(t *testing.T) {
				e.t = t
				c := e.connect("forbidden")
				c.pc.PublishWithOptions(context.Background(), &paho.Publish{ //nolint:errcheck // the broker never acks it
					QoS: 1, Topic: server.RequestTopic, Payload: cmd("SET", "k", "v"),
					Properties: &paho.PublishProperties{ResponseTopic: tc.topic, CorrelationData: []byte("0123456789abcdef"),
						User: paho.UserProperties{{Key: "__ts", Value: e.stamp(0)}}},
				}, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
				select {
				case <-c.pc.Done():
				case <-time.After(wait):
					t.Fatal("client still connected")
				}
				if _, ok := e.srv.Engine().Lookup([]byte("k")); ok {
					t.Fatal("the request was executed")
				}
			})
		}
	})
}

// Attached to another broker, the service cannot disconnect anyone: it
// drops the request.
func TestForbiddenResponseTopicIsDroppedInExternalMode(t *testing.T) {
	e := newEnv(t, mosquittoURL(t), nil)
	c := e.connect("forbidden")
	for _, tc := range forbiddenResponseTopics {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(request{payload: cmd("SET", "k", "v"), respTopic: tc.topic})
			c.expectNoResponse()
		})
	}
}
