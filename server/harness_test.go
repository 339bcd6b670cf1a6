package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// wait bounds every wait of the suite; nothing is expected to take more
// than a fraction of it, so it only decides how long a broken test hangs.
const wait = 5 * time.Second

// env is one running state store under test and the clock it runs on.
type env struct {
	t        testing.TB
	srv      *server.Server
	clock    *engine.FakeClock
	embedded bool
}

// eachTransport runs f against an embedded server and against a server
// attached to mosquitto, each on a fake clock set to the current time.
func eachTransport(t *testing.T, f func(t *testing.T, e *env), opts ...func(*server.Options)) {
	t.Run("embedded", func(t *testing.T) { f(t, newEnv(t, "", opts)) })
	t.Run("mosquitto", func(t *testing.T) { f(t, newEnv(t, brokertest.Mosquitto(t), opts)) })
}

func mosquittoURL(t testing.TB) string { return brokertest.Mosquitto(t) }

func embeddedOnly(t *testing.T, f func(t *testing.T, e *env), opts ...func(*server.Options)) {
	f(t, newEnv(t, "", opts))
}

func newEnv(t testing.TB, broker string, opts []func(*server.Options)) *env {
	e := &env{t: t, clock: engine.NewFakeClock(time.Now()), embedded: broker == ""}
	so := []servertest.Option{servertest.WithOptions(func(o *server.Options) { o.Now = e.clock.Now })}
	for _, f := range opts {
		so = append(so, servertest.WithOptions(f))
	}
	if e.embedded {
		e.srv = servertest.New(t, so...)
	} else {
		e.srv = servertest.NewExternal(t, broker, so...)
	}
	return e
}

// stamp is an HLC on the env's clock, offset by d, as a client would send
// it in __ts or __ft.
func (e *env) stamp(d time.Duration) string {
	return hlc.HLC{Wall: uint64(e.clock.Now().Add(d).UnixMilli()), Node: "test"}.String()
}

// client is a raw MQTT 5 client: it sends exactly the bytes and
// properties a case gives it.
type client struct {
	t         testing.TB
	e         *env
	id        string
	pc        *paho.Client
	respTopic string
	resp      chan *paho.Publish
	other     chan *paho.Publish
}

func (e *env) connect(id string) *client {
	t := e.t
	t.Helper()
	u, err := url.Parse(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{
		t: t, e: e, id: id,
		respTopic: ownResponseTopic(id),
		resp:      make(chan *paho.Publish, 1024),
		other:     make(chan *paho.Publish, 1024),
	}
	c.pc = paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			ch := c.other
			if pr.Packet.Topic == c.respTopic {
				ch = c.resp
			}
			select {
			case ch <- pr.Packet:
			default:
				t.Errorf("%s: receive buffer full", id)
			}
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := c.pc.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatalf("connect %s: %v", id, err)
	}
	t.Cleanup(func() { _ = c.pc.Disconnect(&paho.Disconnect{}) })
	c.subscribe(c.respTopic)
	return c
}

func (c *client) subscribe(filter string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1, NoLocal: true}}})
	if err != nil || ack.Reasons[0] >= 0x80 {
		c.t.Fatalf("subscribe %s: %v %v", filter, err, ack)
	}
}

// subscribeNotify subscribes to the client's own notification topics.
func (c *client) subscribeNotify() {
	c.subscribe(server.NotifyPrefix + "/" + strings.ToUpper(hex.EncodeToString([]byte(c.id))) + "/command/notify/+")
}

// request is one PUBLISH to the request topic. Zero fields get the
// values an official client sends; the flags remove them.
type request struct {
	payload     []byte
	ts, ft      string // __ts (default: now), __ft (default: none)
	noTS        bool
	user        paho.UserProperties // replaces the default user properties when set
	corr        []byte              // default: 16 random bytes
	noCorr      bool
	respTopic   string // default: the client's response topic
	noRespTopic bool
	qos0        bool
	retain      bool
	unacked     bool // publish without waiting for the PUBACK (a refused request gets none)
}

// ownResponseTopic is the client's state store response topic in the Rust
// SDK's layout (ssgen's runtime's), under the client's own level: a topic
// the topic rule protects (protocol.ServiceOwned).
func ownResponseTopic(id string) string {
	return protocol.ResponseTopic(protocol.OwnLevel(id))
}

func (c *client) send(r request) []byte {
	c.t.Helper()
	corr := r.corr
	if corr == nil && !r.noCorr {
		corr = make([]byte, 16)
		_, _ = rand.Read(corr)
	}
	rt := r.respTopic
	if rt == "" && !r.noRespTopic {
		rt = c.respTopic
	}
	user := r.user
	if user == nil {
		user = paho.UserProperties{{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "1.0"}}
		if !r.noTS {
			ts := r.ts
			if ts == "" {
				ts = c.e.stamp(0)
			}
			user = append(user, paho.UserProperty{Key: "__ts", Value: ts})
		}
		if r.ft != "" {
			user = append(user, paho.UserProperty{Key: "__ft", Value: r.ft})
		}
	}
	p := &paho.Publish{
		QoS: 1, Topic: server.RequestTopic, Payload: r.payload,
		Properties: &paho.PublishProperties{ResponseTopic: rt, CorrelationData: corr, ContentType: "application/octet-stream", User: user},
	}
	if r.qos0 {
		p.QoS = 0
	}
	p.Retain = r.retain
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var opts paho.PublishOptions
	if r.unacked {
		opts.Method = paho.PublishMethod_AsyncSend
	}
	if _, err := c.pc.PublishWithOptions(ctx, p, opts); err != nil {
		c.t.Fatalf("publish: %v", err)
	}
	return corr
}

// await returns the next response; the suite never expects more than one
// outstanding request per client.
func (c *client) await() *paho.Publish {
	c.t.Helper()
	select {
	case p := <-c.resp:
		return p
	case <-time.After(wait):
		c.t.Fatalf("%s: no response within %v", c.id, wait)
		return nil
	}
}

// roundTrip sends r and returns its response, checking the echo of the
// correlation data.
func (c *client) roundTrip(r request) *paho.Publish {
	c.t.Helper()
	corr := c.send(r)
	p := c.await()
	if string(p.Properties.CorrelationData) != string(corr) {
		c.t.Fatalf("correlation data %x, want %x", p.Properties.CorrelationData, corr)
	}
	return p
}

// do sends a well-formed command and returns its response.
func (c *client) do(args ...string) *paho.Publish {
	c.t.Helper()
	return c.roundTrip(request{payload: cmd(args...)})
}

// expectNoResponse checks that the requests sent before it got no answer:
// it sends a GET and requires that the next response is the GET's. Both
// transports answer one client's requests in order.
func (c *client) expectNoResponse() {
	c.t.Helper()
	corr := c.send(request{payload: cmd("GET", "barrier")})
	p := c.await()
	if string(p.Properties.CorrelationData) != string(corr) {
		c.t.Fatalf("got a response (%q) to a request that must not be answered", p.Payload)
	}
}

// notification returns the next message that is not a response.
func (c *client) notification() *paho.Publish {
	c.t.Helper()
	select {
	case p := <-c.other:
		return p
	case <-time.After(wait):
		c.t.Fatalf("%s: no notification within %v", c.id, wait)
		return nil
	}
}

func cmd(args ...string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return resp3.AppendCommand(nil, b...)
}

// props returns the user properties as a map, failing on duplicates.
func props(t testing.TB, p *paho.Publish) map[string]string {
	t.Helper()
	m := map[string]string{}
	if p.Properties == nil {
		return m
	}
	for _, u := range p.Properties.User {
		if _, dup := m[u.Key]; dup {
			t.Fatalf("user property %s twice", u.Key)
		}
		m[u.Key] = u.Value
	}
	return m
}

// checkResponse checks a state store response: payload, __stat 200,
// __protVer 1.0, __ts present iff wantTS, nothing else; and returns __ts.
func checkResponse(t testing.TB, p *paho.Publish, payload string, wantTS bool) string {
	t.Helper()
	if string(p.Payload) != payload {
		t.Fatalf("payload %q, want %q", p.Payload, payload)
	}
	if p.QoS != 1 {
		t.Errorf("response QoS %d, want 1", p.QoS)
	}
	if ct := p.Properties.ContentType; ct != "" && ct != "application/octet-stream" {
		t.Errorf("content type %q", ct)
	}
	m := props(t, p)
	if m["__stat"] != "200" || m["__protVer"] != "1.0" {
		t.Fatalf("user properties %v, want __stat 200 and __protVer 1.0", m)
	}
	ts, hasTS := m["__ts"]
	if hasTS != wantTS {
		t.Fatalf("__ts present = %v (%q), want %v", hasTS, ts, wantTS)
	}
	if hasTS {
		if _, err := hlc.Parse(ts); err != nil {
			t.Fatalf("__ts: %v", err)
		}
	}
	if len(m) != 2+btoi(hasTS) {
		t.Fatalf("unexpected user properties %v", m)
	}
	return ts
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waitFor polls cond until it holds, failing the test after three times
// the suite's bound (a broker restart and the reconnect after it fit).
// It is this package's one way to wait for a condition or to retry an
// action until it succeeds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 3*wait, what, cond)
}
