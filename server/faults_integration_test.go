package server_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server"
)

// faultEnv is an embedded server with fault injection (or without, when
// off) whose request trace the test reads.
type faultEnv struct {
	*env
	mu     sync.Mutex
	events []server.RequestEvent
}

func newFaultEnv(t *testing.T, on bool) *faultEnv {
	fe := &faultEnv{}
	fe.env = newEnv(t, "", []func(*server.Options){func(o *server.Options) {
		o.FaultInjection = on
		o.OnRequest = func(ev *server.RequestEvent) {
			fe.mu.Lock()
			defer fe.mu.Unlock()
			c := *ev
			c.Key = append([]byte(nil), ev.Key...)
			c.Payload = nil
			fe.events = append(fe.events, c)
		}
	}})
	return fe
}

// traced returns the trace events whose reason mentions an injected fault.
func (fe *faultEnv) traced() []server.RequestEvent {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	var out []server.RequestEvent
	for _, ev := range fe.events {
		if strings.HasPrefix(ev.Reason, "injected fault") {
			out = append(out, ev)
		}
	}
	return out
}

// faultPeer is a raw MQTT 5 client that tells what the server did to it.
type faultPeer struct {
	t          *testing.T
	fe         *faultEnv
	id         string
	pc         *paho.Client
	respTopic  string
	msgs       chan *paho.Publish
	disconnect chan *paho.Disconnect
}

// dial connects id with the CONNECT user properties user; it returns the
// CONNACK's error, if any.
func (fe *faultEnv) dial(id string, user paho.UserProperties) (*faultPeer, *paho.Connack, error) {
	t := fe.t.(*testing.T)
	t.Helper()
	u, err := url.Parse(fe.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultPeer{
		t: t, fe: fe, id: id, respTopic: ownResponseTopic(id),
		msgs:       make(chan *paho.Publish, 64),
		disconnect: make(chan *paho.Disconnect, 1),
	}
	p.pc = paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			select {
			case p.msgs <- pr.Packet:
			default:
				t.Errorf("%s: receive buffer full", id)
			}
			return true, nil
		}},
		OnServerDisconnect: func(d *paho.Disconnect) { p.disconnect <- d },
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cp := &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}
	if user != nil {
		cp.Properties = &paho.ConnectProperties{User: user}
	}
	ca, err := p.pc.Connect(ctx, cp)
	if err != nil {
		return nil, ca, err
	}
	t.Cleanup(func() { _ = p.pc.Disconnect(&paho.Disconnect{}) })
	return p, ca, nil
}

func (fe *faultEnv) peer(id string) *faultPeer {
	fe.t.Helper()
	p, _, err := fe.dial(id, nil)
	if err != nil {
		fe.t.Fatalf("connect %s: %v", id, err)
	}
	return p
}

// subscribe subscribes to filter with the SUBSCRIBE user properties user.
func (p *faultPeer) subscribe(filter string, user paho.UserProperties) (*paho.Suback, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}}
	if user != nil {
		s.Properties = &paho.SubscribeProperties{User: user}
	}
	return p.pc.Subscribe(ctx, s)
}

func (p *faultPeer) unsubscribe(filter string, user paho.UserProperties) (*paho.Unsuback, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	u := &paho.Unsubscribe{Topics: []string{filter}}
	if user != nil {
		u.Properties = &paho.UnsubscribeProperties{User: user}
	}
	return p.pc.Unsubscribe(ctx, u)
}

// request publishes a state store request (QoS 1) with the envelope's
// properties plus user, and returns the PUBACK's outcome. The response,
// if any, arrives on msgs.
func (p *faultPeer) request(payload []byte, user paho.UserProperties) (*paho.PublishResponse, error) {
	corr := make([]byte, 16)
	_, _ = rand.Read(corr)
	props := paho.UserProperties{
		{Key: "__srcId", Value: p.id}, {Key: "__protVer", Value: "1.0"},
		{Key: "__ts", Value: p.fe.stamp(0)},
	}
	props = append(props, user...)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return p.pc.Publish(ctx, &paho.Publish{
		QoS: 1, Topic: server.RequestTopic, Payload: payload,
		Properties: &paho.PublishProperties{ResponseTopic: p.respTopic, CorrelationData: corr, User: props},
	})
}

func (p *faultPeer) publish(topic string, user paho.UserProperties) (*paho.PublishResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return p.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(topic), Properties: &paho.PublishProperties{User: user}})
}

// next returns the next message delivered to p.
func (p *faultPeer) next() *paho.Publish {
	p.t.Helper()
	select {
	case m := <-p.msgs:
		return m
	case <-time.After(wait):
		p.t.Fatalf("%s: no message within %v", p.id, wait)
		return nil
	}
}

// disconnected returns the DISCONNECT the server sent p.
func (p *faultPeer) disconnected() *paho.Disconnect {
	p.t.Helper()
	select {
	case d := <-p.disconnect:
		return d
	case <-time.After(wait):
		p.t.Fatalf("%s: not disconnected within %v", p.id, wait)
		return nil
	}
}

func ups(kv ...string) paho.UserProperties {
	var out paho.UserProperties
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, paho.UserProperty{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

// The disconnect reason codes the SDK tests use.
const (
	codeAdministrative = "152" // DISCONNECT 0x98
	codeServerBusy     = "137" // CONNACK 0x89
	codeNotAuthorized  = "135" // 0x87
)

func TestFaultRejectConnectOncePerRequestID(t *testing.T) {
	fe := newFaultEnv(t, true)
	user := ups(protocol.FaultRejectConnect, codeServerBusy, protocol.FaultRequestID, "connect-1")
	_, ca, err := fe.dial("fault-connect", user)
	if err == nil || ca == nil || ca.ReasonCode != 0x89 {
		t.Fatalf("first CONNECT: connack %+v, error %v; want refused with 0x89", ca, err)
	}
	if ca.Properties == nil || ca.Properties.ReasonString != "injected fault" {
		t.Errorf("CONNACK reason string %+v, want %q", ca.Properties, "injected fault")
	}
	// The SDK's retry sends the same CONNECT: it goes through.
	if _, _, err := fe.dial("fault-connect", user); err != nil {
		t.Fatalf("CONNECT retried with the same request id: %v", err)
	}
	// Without a request id, every CONNECT is refused.
	for range 2 {
		if _, ca, err := fe.dial("fault-connect-2", ups(protocol.FaultRejectConnect, codeServerBusy)); err == nil || ca.ReasonCode != 0x89 {
			t.Fatalf("CONNECT without request id: connack %+v, error %v; want 0x89", ca, err)
		}
	}
}

func TestFaultDisconnectBeforeRequest(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-disc")
	sub(t, p)
	user := ups(protocol.FaultDisconnect, codeAdministrative, protocol.FaultRequestID, "set-1")
	go func() { _, _ = p.request(cmd("SET", "k", "v"), user) }() // no PUBACK comes
	if d := p.disconnected(); d.ReasonCode != 0x98 {
		t.Fatalf("DISCONNECT reason 0x%02X, want 0x98", d.ReasonCode)
	}
	if _, ok := fe.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("the request was processed before the disconnect")
	}
	ev := fe.traced()
	if len(ev) != 1 || ev[0].Verb != "SET" || string(ev[0].Key) != "k" || !ev[0].Dropped || !ev[0].Disconnected ||
		!strings.Contains(ev[0].Reason, "DISCONNECT 0x98") {
		t.Fatalf("trace %+v, want one dropped SET k, client disconnected, for the injected fault", ev)
	}
	// The retry on a new connection, same request id: served.
	p2 := fe.peer("fault-disc")
	sub(t, p2)
	if _, err := p2.request(cmd("SET", "k", "v"), user); err != nil {
		t.Fatalf("retried request: %v", err)
	}
	if m := p2.next(); string(m.Payload) != "+OK\r\n" {
		t.Fatalf("retried request answered %q", m.Payload)
	}
}

// sub subscribes p to its response topic.
func sub(t *testing.T, p *faultPeer) {
	t.Helper()
	if _, err := p.subscribe(p.respTopic, nil); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
}

func TestFaultDisconnectAfterDelay(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-later")
	sub(t, p)
	// One second, as the SDK tests use: with 0 the DISCONNECT follows the
	// PUBACK and the answer so closely that paho may end the connection
	// before its callbacks have handed them over.
	user := ups(protocol.FaultDisconnect, codeAdministrative, protocol.FaultDelay, "1")
	pr, err := p.request(cmd("SET", "k", "v"), user)
	if err != nil || pr.ReasonCode != 0 {
		t.Fatalf("PUBACK %+v, %v; want success before the disconnect", pr, err)
	}
	if m := p.next(); string(m.Payload) != "+OK\r\n" {
		t.Fatalf("answered %q, want +OK", m.Payload)
	}
	if d := p.disconnected(); d.ReasonCode != 0x98 {
		t.Fatalf("DISCONNECT reason 0x%02X, want 0x98", d.ReasonCode)
	}
	if _, ok := fe.srv.Engine().Lookup([]byte("k")); !ok {
		t.Fatal("the request was not processed")
	}
	waitFor(t, "the delayed disconnect in the trace", func() bool {
		ev := fe.traced()
		return len(ev) == 1 && ev[0].Disconnected && !ev[0].Dropped && ev[0].Verb == "SET"
	})
}

func TestFaultDisconnectOnSubscribeAndUnsubscribe(t *testing.T) {
	fe := newFaultEnv(t, true)
	user := ups(protocol.FaultDisconnect, codeAdministrative, protocol.FaultRequestID, "sub-1")
	p := fe.peer("fault-sub")
	go func() { _, _ = p.subscribe("t/a", user) }()
	if d := p.disconnected(); d.ReasonCode != 0x98 {
		t.Fatalf("SUBSCRIBE: DISCONNECT 0x%02X, want 0x98", d.ReasonCode)
	}
	p = fe.peer("fault-sub")
	if _, err := p.subscribe("t/a", user); err != nil {
		t.Fatalf("SUBSCRIBE retried with the same request id: %v", err)
	}
	// The request id is remembered per packet type: the same id on an
	// UNSUBSCRIBE faults.
	go func() { _, _ = p.unsubscribe("t/a", user) }()
	if d := p.disconnected(); d.ReasonCode != 0x98 {
		t.Fatalf("UNSUBSCRIBE: DISCONNECT 0x%02X, want 0x98", d.ReasonCode)
	}
}

func TestFaultRejectPublish(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-pub")
	sub(t, p)
	pr, err := p.request(cmd("SET", "k", "v"), ups(protocol.FaultRejectPublish, codeNotAuthorized))
	if err == nil || pr == nil || pr.ReasonCode != 0x87 {
		t.Fatalf("PUBACK %+v, %v; want 0x87", pr, err)
	}
	if _, ok := fe.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("a rejected request was processed")
	}
	// The connection lives on, and the next request is answered (the
	// rejected one never is: the next answer is this one's).
	if _, err := p.request(cmd("GET", "k"), nil); err != nil {
		t.Fatal(err)
	}
	if m := p.next(); string(m.Payload) != "$-1\r\n" {
		t.Fatalf("GET answered %q, want $-1", m.Payload)
	}
	ev := fe.traced()
	if len(ev) != 1 || !ev[0].Dropped || ev[0].Disconnected || !strings.Contains(ev[0].Reason, "PUBACK 0x87") {
		t.Fatalf("trace %+v, want one dropped request for PUBACK 0x87", ev)
	}
	// Any topic, not only requests.
	if pr, err := p.publish("t/x", ups(protocol.FaultRejectPublish, "151")); err == nil || pr.ReasonCode != 0x97 {
		t.Fatalf("PUBACK %+v, %v; want 0x97", pr, err)
	}
	// At QoS 2 the PUBREC refuses it.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	pr, err = p.pc.Publish(ctx, &paho.Publish{QoS: 2, Topic: "t/x", Payload: []byte("x"),
		Properties: &paho.PublishProperties{User: ups(protocol.FaultRejectPublish, "153")}})
	if pr == nil || pr.ReasonCode != 0x99 {
		t.Fatalf("QoS 2: %+v, %v; want PUBREC 0x99", pr, err)
	}
}

func TestFaultRejectSubscribe(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-rsub")
	if _, err := p.subscribe("t/sync", nil); err != nil {
		t.Fatal(err)
	}
	sa, err := p.subscribe("t/x", ups(protocol.FaultRejectSubscribe, codeNotAuthorized))
	if err == nil || sa == nil || sa.Reasons[0] != 0x87 {
		t.Fatalf("SUBACK %+v, %v; want 0x87", sa, err)
	}
	// Nothing was subscribed: of t/x then t/sync, only t/sync arrives.
	pub := fe.peer("fault-rsub-pub")
	for _, topic := range []string{"t/x", "t/sync"} {
		if _, err := pub.publish(topic, nil); err != nil {
			t.Fatal(err)
		}
	}
	if m := p.next(); m.Topic != "t/sync" {
		t.Fatalf("received %s: the rejected subscription was made", m.Topic)
	}
}

func TestFaultRejectUnsubscribe(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-runsub")
	if _, err := p.subscribe("t/x", nil); err != nil {
		t.Fatal(err)
	}
	ua, err := p.unsubscribe("t/x", ups(protocol.FaultRejectUnsubscribe, "128"))
	if err == nil || ua == nil || ua.Reasons[0] != 0x80 {
		t.Fatalf("UNSUBACK %+v, %v; want 0x80", ua, err)
	}
	// Still subscribed.
	if _, err := fe.peer("fault-runsub-pub").publish("t/x", nil); err != nil {
		t.Fatal(err)
	}
	if m := p.next(); m.Topic != "t/x" {
		t.Fatalf("received %s", m.Topic)
	}
}

// TestFaultValuesThatDoNotApply: a value that does not parse, a code not
// valid for the packet, or a success code is no fault.
func TestFaultValuesThatDoNotApply(t *testing.T) {
	fe := newFaultEnv(t, true)
	p := fe.peer("fault-bad")
	sub(t, p)
	for _, user := range []paho.UserProperties{
		ups(protocol.FaultDisconnect, "0x98"),
		ups(protocol.FaultDisconnect, "4"), // a client's code (disconnect with will)
		ups(protocol.FaultDisconnect, "152", protocol.FaultDelay, "-1"),
		ups(protocol.FaultRejectPublish, "16"), // a success code
		ups(protocol.FaultRejectPublish, "137"),
		ups(protocol.FaultRejectPublish, "1000"),
		ups("Fault:rejectpublish", "135"), // names match exactly
		ups(protocol.FaultRejectSubscribe, "135"),
	} {
		if pr, err := p.request(cmd("SET", "k", "v"), user); err != nil || pr.ReasonCode != 0 {
			t.Fatalf("%v: PUBACK %+v, %v", user, pr, err)
		}
		if m := p.next(); string(m.Payload) != "+OK\r\n" {
			t.Fatalf("%v: answered %q", user, m.Payload)
		}
	}
	if ev := fe.traced(); len(ev) != 0 {
		t.Fatalf("faults traced: %+v", ev)
	}
}

// TestFaultInjectionOffChangesNothing: without Options.FaultInjection,
// every fault property is an ordinary user property.
func TestFaultInjectionOffChangesNothing(t *testing.T) {
	fe := newFaultEnv(t, false)
	if _, _, err := fe.dial("fault-off", ups(protocol.FaultRejectConnect, codeServerBusy)); err != nil {
		t.Fatalf("CONNECT refused: %v", err)
	}
	p := fe.peer("fault-off-2")
	if sa, err := p.subscribe(p.respTopic, ups(protocol.FaultRejectSubscribe, codeNotAuthorized, protocol.FaultDisconnect, codeAdministrative)); err != nil || sa.Reasons[0] >= 0x80 {
		t.Fatalf("SUBSCRIBE: %+v, %v", sa, err)
	}
	for _, user := range []paho.UserProperties{
		ups(protocol.FaultRejectPublish, codeNotAuthorized),
		ups(protocol.FaultDisconnect, codeAdministrative),
		ups(protocol.FaultDisconnect, codeAdministrative, protocol.FaultDelay, "0"),
	} {
		if pr, err := p.request(cmd("SET", "k", "v"), user); err != nil || pr.ReasonCode != 0 {
			t.Fatalf("%v: PUBACK %+v, %v", user, pr, err)
		}
		if m := p.next(); string(m.Payload) != "+OK\r\n" {
			t.Fatalf("%v: answered %q", user, m.Payload)
		}
	}
	if ua, err := p.unsubscribe(p.respTopic, ups(protocol.FaultRejectUnsubscribe, codeNotAuthorized)); err != nil || ua.Reasons[0] >= 0x80 {
		t.Fatalf("UNSUBSCRIBE: %+v, %v", ua, err)
	}
	select {
	case d := <-p.disconnect:
		t.Fatalf("disconnected: %+v", d)
	default:
	}
}

func TestFaultInjectionNeedsEmbeddedBroker(t *testing.T) {
	_, err := server.New(server.Options{Broker: "mqtt://127.0.0.1:1", FaultInjection: true})
	if !errors.Is(err, server.ErrInvalidOptions) {
		t.Fatalf("New: %v, want ErrInvalidOptions", err)
	}
}
