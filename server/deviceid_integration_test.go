package server_test

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server"
)

// Device-style client ids are upper-case hex (MAC addresses, serials). Their
// hex decoding is not an id any client can connect with (not UTF-8, or
// holding NUL), so their plain level is theirs: a Rust or .NET SDK client,
// which answers under "clients/{clientId}/…", uses the state store with
// them. The rule refused these levels before (issue 24).

// sdkResponseTopics are the Rust and .NET SDKs' state store response
// topics of a client.
func sdkResponseTopics(id string) map[string]string {
	return map[string]string{
		"rust":   "clients/" + id + "/services/statestore/v1/" + protocol.ServiceID + "/command/invoke/response",
		"dotnet": "clients/" + id + "/statestore/v1/" + protocol.ServiceID + "/command/invoke",
	}
}

func TestDeviceStyleClientIDsUseTheStateStoreUnderTheirPlainID(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		for _, id := range []string{
			"A4C138F0E1D2",     // a MAC address: its decoding is not UTF-8
			"00124B001CAF8E21", // a serial: its decoding holds a zero byte
		} {
			for layout, respTopic := range sdkResponseTopics(id) {
				t.Run(id+"/"+layout, func(t *testing.T) {
					c, _, err := connectResponding(t, e, id, respTopic, nil, "", "")
					if err != nil {
						t.Fatalf("connect %s: %v", id, err)
					}
					c.subscribeNotify()
					key := "device/" + id + "/" + layout
					checkResponse(t, c.do("KEYNOTIFY", key), "+OK\r\n", true)
					checkResponse(t, c.do("GET", key), "$-1\r\n", false)
					checkResponse(t, c.do("SET", key, "on"), "+OK\r\n", true)
					if p := c.notification(); p.Topic != server.NotifyTopic(id, []byte(key)) ||
						string(p.Payload) != "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$2\r\non\r\n" {
						t.Fatalf("notification %q: %q", p.Topic, p.Payload)
					}
					checkResponse(t, c.do("GET", key), "$2\r\non\r\n", true)
					if !e.embedded {
						return
					}
					// The level is the device's own: nobody else reads its
					// answers or writes into them.
					spy := e.connect("spy-" + layout)
					if code := trySubscribe(t, spy, respTopic); code != 0x87 {
						t.Errorf("another client subscribed to %q: 0x%02x", respTopic, code)
					}
					ctx, cancel := context.WithTimeout(context.Background(), wait)
					defer cancel()
					res, err := spy.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: respTopic, Payload: []byte("+OK\r\n")})
					if err == nil || res == nil || res.ReasonCode != 0x87 {
						t.Fatalf("publish into %q: %+v %v, want PUBACK 0x87", respTopic, res, err)
					}
					expectNothingElse(t, c)
				})
			}
		}
	})
}

// An upper-case hex id whose decoding is a valid id still contests that
// id's hex level: "4142" is the hex of "AB", so "4142" as a plain level is
// AB's, and a client "4142" cannot have its answers there.
func TestAHexIDOfAValidIDStillCannotUseItsPlainLevel(t *testing.T) {
	e := newEnv(t, "", nil)
	ab := e.connect("AB")
	if code := trySubscribe(t, ab, "clients/4142/statestore/#"); code >= 0x80 { // its own (hex) level
		t.Fatalf("AB refused its hex level: 0x%02x", code)
	}
	c := e.connect("4142") // the runtime's layout under its hex level, 34313432
	checkResponse(t, c.do("SET", "k", "v"), "+OK\r\n", true)
	c.send(request{payload: cmd("GET", "k"), respTopic: sdkResponseTopics("4142")["rust"], unacked: true})
	expectDisconnected(t, c)
	expectNothingElse(t, ab)
}

func TestClientIDsWithControlCharactersAreRefused(t *testing.T) {
	e := newEnv(t, "", nil)
	for _, id := range []string{"sensor\x01", "tab\tid", "line\nid", "del\x7f", "c1\u0085"} {
		_, ack, err := connectAs(t, e, id, nil, "", "")
		if err == nil || connackCode(ack) != 0x85 {
			t.Errorf("client id %q: %v, CONNACK 0x%02x; want 0x85 (Client Identifier not valid)", id, err, connackCode(ack))
		}
	}
	// Invalid UTF-8 and NUL are malformed CONNECTs: mochi closes the
	// connection without a CONNACK.
	for _, id := range []string{"\xa4\xc1\x38\xf0\xe1\xd2", "a\x00b"} {
		if _, _, err := connectAs(t, e, id, nil, "", ""); err == nil {
			t.Errorf("client id %q connected", id)
		}
	}
	for _, id := range []string{"sensor-ü", "A4C138F0E1D2", "a/b", "\uFFFD"} {
		if _, _, err := connectAs(t, e, id, nil, "", ""); err != nil {
			t.Errorf("client id %q refused: %v", id, err)
		}
	}
}

// The official SDKs' command invoker takes its answers on
// "clients/{invokerId}/{requestTopic}", where the executor, another client,
// publishes: ordinary MQTT, as on the real broker. A state store request
// that names such a topic of another client as its Response Topic is still
// refused.
func TestClientsPublishIntoEachOthersLevelsOutsideTheStateStoresTopics(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		invoker := e.connect("invoker")
		executor := e.connect("executor")
		const replyTopic = "clients/invoker/rpc/samples/executor/increment"
		invoker.subscribe(replyTopic)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		corr := []byte("0123456789abcdef")
		if _, err := executor.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: replyTopic, Payload: []byte(`{"counter":1}`),
			Properties: &paho.PublishProperties{CorrelationData: corr}}); err != nil {
			t.Fatalf("executor's answer: %v", err)
		}
		if p := invoker.notification(); p.Topic != replyTopic || string(p.Properties.CorrelationData) != string(corr) {
			t.Fatalf("invoker got %q %q", p.Topic, p.Properties.CorrelationData)
		}

		executor.send(request{payload: cmd("SET", "k", "v"), respTopic: replyTopic, unacked: true})
		if e.embedded {
			expectDisconnected(t, executor)
		} else {
			executor.expectNoResponse()
		}
		expectNothingElse(t, invoker)
		if _, ok := e.srv.Engine().Lookup([]byte("k")); ok {
			t.Fatal("the refused request was executed")
		}
	})
}
