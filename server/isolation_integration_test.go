package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server"
)

// The attacks of the client-isolation review, each reproduced on the
// embedded broker (the retained request on mosquitto) and shown refused.

const isolationPolicy = `
rules:
  - principals: {usernames: ["victim"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["b/*"], method: ReadWrite}
  - principals: {usernames: ["attacker"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["a/*"], method: ReadWrite}
`

// isolationEnv is an embedded server with passwords for "victim" and
// "attacker" and the policy above: each user may touch only its own keys.
func isolationEnv(t *testing.T) *env {
	t.Helper()
	pol, err := server.ParsePolicy([]byte(isolationPolicy))
	if err != nil {
		t.Fatal(err)
	}
	sec := server.Security{Passwords: passwords(t, "victim", "v", "attacker", "a"), Authorization: pol}
	return newEnv(t, "", []func(*server.Options){withSecurity(sec)})
}

// trySubscribe returns the SUBACK reason code for filter.
func trySubscribe(t *testing.T, c *client, filter string) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if ack != nil && len(ack.Reasons) == 1 {
		return ack.Reasons[0]
	}
	t.Fatalf("subscribe %q: %v", filter, err)
	return 0
}

// expectNothingElse checks that c received no message but responses: it
// makes one round trip first, so that anything routed before it has
// arrived.
func expectNothingElse(t *testing.T, c *client) {
	t.Helper()
	c.expectNoResponse()
	select {
	case p := <-c.other:
		t.Fatalf("%s received %q: %q", c.id, p.Topic, p.Payload)
	default:
	}
}

// expectDisconnected waits until the server has closed c's connection.
func expectDisconnected(t *testing.T, c *client) {
	t.Helper()
	select {
	case <-c.pc.Done():
	case <-time.After(wait):
		t.Fatalf("%s still connected", c.id)
	}
}

func TestAHexClientIDReadsNothingOfTheClientItSpells(t *testing.T) {
	e := isolationEnv(t)
	victim := mustConnect(t, e, "victim-app", nil, "victim", "v")
	victim.subscribeNotify()
	checkResponse(t, victim.do("KEYNOTIFY", "b/secret"), "+OK\r\n", true)

	attacker := mustConnect(t, e, "76696374696D2D617070", nil, "attacker", "a") // HEX("victim-app")
	for _, filter := range []string{
		server.NotifyPrefix + "/76696374696D2D617070/command/notify/+", // the victim's notifications
		"clients/76696374696D2D617070/#",                               // the official Go SDK's response topics
	} {
		if code := trySubscribe(t, attacker, filter); code != 0x87 {
			t.Errorf("subscribe %q: reason 0x%02x, want 0x87", filter, code)
		}
	}
	checkResponse(t, victim.do("SET", "b/secret", "s3cret"), "+OK\r\n", true)
	if p := victim.notification(); string(p.Payload) != "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$6\r\ns3cret\r\n" {
		t.Fatalf("victim's notification %q", p.Payload)
	}
	expectNothingElse(t, attacker)
}

// The reverse: the victim's id is hex, and the attacker's id is what it
// decodes to. The victim may not use its id as a plain level (it is the
// attacker's hex level), so a request answered there is refused, not sent
// to the attacker.
func TestAClientIDThatDecodesAVictimsHexIDReadsNothing(t *testing.T) {
	e := isolationEnv(t)
	attacker := mustConnect(t, e, "attacker", nil, "attacker", "a")
	if code := trySubscribe(t, attacker, "clients/61747461636B6572/#"); code >= 0x80 { // its own hex level
		t.Fatalf("own hex level refused: 0x%02x", code)
	}
	victim := mustConnect(t, e, "61747461636B6572", nil, "victim", "v")
	checkResponse(t, victim.do("SET", "b/x", "1"), "+OK\r\n", true) // on its own (hex) level
	victim.send(request{payload: cmd("GET", "b/x"), respTopic: "clients/61747461636B6572/statestore/v1/" + protocol.ServiceID + "/command/invoke", unacked: true})
	expectDisconnected(t, victim)
	expectNothingElse(t, attacker)
}

func TestAClientNamedStatestoreReadsNoNotifications(t *testing.T) {
	e := newEnv(t, "", nil)
	victim := e.connect("victim-app")
	victim.subscribeNotify()
	checkResponse(t, victim.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	spy := e.connect("statestore")
	for _, filter := range []string{"clients/statestore/#", "clients/statestore/v1/#", server.NotifyPrefix + "/#"} {
		if code := trySubscribe(t, spy, filter); code != 0x87 {
			t.Errorf("subscribe %q: reason 0x%02x, want 0x87", filter, code)
		}
	}
	checkResponse(t, victim.do("SET", "k", "v"), "+OK\r\n", true)
	victim.notification()
	expectNothingElse(t, spy)
}

// A will is published by the broker, not by a PUBLISH: it is checked
// against the same rule at CONNECT.
func TestAWillCannotForgeANotificationOrWriteIntoAnotherClientsTopics(t *testing.T) {
	e := newEnv(t, "", nil)
	victim := e.connect("victim-app")
	victim.subscribeNotify()
	checkResponse(t, victim.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	forged := cmd("NOTIFY", "SET", "VALUE", "forged")
	for _, topic := range []string{
		server.NotifyTopic("victim-app", []byte("k")),
		"clients/statestore/anything",
		victim.respTopic,
		"clients/76696374696D2D617070/statestore/v1/" + protocol.ServiceID + "/command/invoke/response", // Go layout
		"clients/victim-app/statestore/v1/" + protocol.ServiceID + "/command/invoke",                    // .NET layout
	} {
		for _, retain := range []bool{false, true} {
			_, ack, err := connectAs(t, e, "attacker", nil, "", "", func(c *paho.Connect) {
				c.WillMessage = &paho.WillMessage{Topic: topic, Payload: forged, QoS: 1, Retain: retain}
				c.WillProperties = &paho.WillProperties{User: paho.UserProperties{{Key: "__ts", Value: e.stamp(0)}}}
			})
			if err == nil || connackCode(ack) != 0x87 {
				t.Fatalf("will on %q (retain %v) accepted: %v", topic, retain, err)
			}
		}
	}
	// A will on a topic the state store does not write is ordinary MQTT,
	// under "clients/" too: it fires, and another client may read it. (This
	// test once expected that subscription refused: the rule then covered
	// all of "clients/", which broke the official SDKs' cross-client RPC.)
	own, _, err := connectAs(t, e, "dropper", nil, "", "", func(c *paho.Connect) {
		c.WillMessage = &paho.WillMessage{Topic: "clients/dropper/gone", Payload: []byte("bye"), QoS: 1}
	})
	if err != nil {
		t.Fatal(err)
	}
	watcher := e.connect("dropper-watch")
	if code := trySubscribe(t, watcher, "clients/dropper/gone"); code >= 0x80 {
		t.Fatalf("subscribe to dropper's will topic: 0x%02x", code)
	}
	own.pc.Disconnect(&paho.Disconnect{ReasonCode: 0x04}) // disconnect with will message
	if p := watcher.notification(); p.Topic != "clients/dropper/gone" || string(p.Payload) != "bye" {
		t.Fatalf("watcher got %q: %q, want dropper's will", p.Topic, p.Payload)
	}

	victim.subscribeNotify() // a later subscription finds no retained forgery
	expectNothingElse(t, victim)
}

func TestNoClientPublishesIntoAnotherClientsResponseTopic(t *testing.T) {
	e := newEnv(t, "", nil)
	victim := e.connect("victim-app")
	attacker := e.connect("attacker")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, topic := range []string{victim.respTopic, "clients/76696374696D2D617070/statestore/v1/x/command/invoke/response"} {
		res, err := attacker.pc.Publish(ctx, &paho.Publish{
			QoS: 1, Topic: topic, Payload: []byte("+OK\r\n"),
			Properties: &paho.PublishProperties{CorrelationData: make([]byte, 16), User: paho.UserProperties{{Key: "__stat", Value: "200"}}},
		})
		if err == nil || res == nil || res.ReasonCode != 0x87 {
			t.Fatalf("publish into %q: %+v %v, want PUBACK 0x87", topic, res, err)
		}
	}
	expectNothingElse(t, victim)

	// A request asking for its answer in the victim's topics is refused:
	// the requester is disconnected, nothing is answered or changed.
	attacker.send(request{payload: cmd("SET", "k", "v"), respTopic: victim.respTopic, unacked: true})
	expectDisconnected(t, attacker)
	expectNothingElse(t, victim)
	if _, ok := e.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("the refused request was executed")
	}
}

// External mode subscribes with Retain Handling 2 and refuses the retain
// flag, so a retained request runs neither live nor on a restart.
func TestExternalModeNeverExecutesARetainedRequest(t *testing.T) {
	broker := brokertest.Mosquitto(t)
	first := newEnv(t, broker, nil)
	c := first.connect("writer")
	c.send(request{payload: cmd("SET", "k", "old"), retain: true})
	c.expectNoResponse()
	if _, ok := first.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("a retained request was executed")
	}
	checkResponse(t, c.do("SET", "k", "new"), "+OK\r\n", true)
	if err := first.srv.Close(); err != nil {
		t.Fatal(err)
	}

	// A restarted service (a fresh engine) must not find the retained
	// request replayed to it.
	second := newEnv(t, broker, nil)
	checkResponse(t, c.do("GET", "k"), "$-1\r\n", false)
	if _, ok := second.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("the retained request was replayed to the restarted service")
	}
}

// Found by the attacker's review: a retained message under a client's own
// topics outlived its session, so the next connection with that id, under
// another user, read it or planted one for the owner. Retain is refused on
// the topics the state store owns (PUBACK or CONNACK 0x9A); elsewhere under
// "clients/" it is ordinary MQTT, as on the real broker.
func TestNothingIsRetainedUnderClients(t *testing.T) {
	e := isolationEnv(t)
	alice := mustConnect(t, e, "victim-app", nil, "victim", "v")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := alice.pc.Publish(ctx, &paho.Publish{QoS: 1, Retain: true, Topic: ownResponseTopic("victim-app"), Payload: []byte("secret")})
	if err == nil || res == nil || res.ReasonCode != 0x9A {
		t.Fatalf("retained publish on its own response topic: %+v %v, want PUBACK 0x9A", res, err)
	}
	res, err = alice.pc.Publish(ctx, &paho.Publish{QoS: 1, Retain: true, Topic: "clients/victim-app/config", Payload: []byte("ordinary")})
	if err != nil || res == nil || res.ReasonCode != 0 {
		t.Fatalf("retained publish on an ordinary topic under clients/: %+v %v, want PUBACK 0", res, err)
	}
	_, ack, err := connectAs(t, e, "dropper", nil, "attacker", "a", func(c *paho.Connect) {
		c.WillMessage = &paho.WillMessage{Topic: ownResponseTopic("dropper"), Payload: []byte("x"), QoS: 1, Retain: true}
	})
	if err == nil || connackCode(ack) != 0x9A {
		t.Fatalf("retained will on its own response topic: %v, want CONNACK 0x9A", err)
	}
}
