package server

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session"

	"github.com/ssgen/ssgen/internal/bufconn"
	"github.com/ssgen/ssgen/internal/pahoctx"
	"github.com/ssgen/ssgen/internal/pahostore"
)

// A broker that keeps Nagle's algorithm on (mosquitto does unless
// set_tcp_nodelay is true) holds the second of two small packets it
// writes to one client until that client's delayed ACK of the first,
// about 40 ms on Linux: a client's PUBACK, then the response to its
// request, so every request of every client takes ~44 ms. The service
// cannot see its clients' sockets, so after each connection it plays a
// client for a moment: a second connection (the prober) publishes a QoS 1
// "ping" that the service's own connection answers with a "pong", just as
// it answers a request, and times the round trip. If even the fastest of
// a few was slow, it warns once.

// DefaultSlowBroker is Options.SlowBroker when zero: a broker on the same
// host passes a request and its answer on in well under a millisecond.
const DefaultSlowBroker = 20 * time.Millisecond

// A connection's first few segments are acknowledged at once (Linux's
// quick-ACK mode), which hides the delay: the first rounds are warm-up and
// only the fastest of the last probeCounted is judged.
const (
	probeRounds  = 12
	probeCounted = 6
	probeTimeout = 2 * time.Second
)

// brokerProbe is the service connection's side of the round-trip probe.
type brokerProbe struct {
	ping, pong string // topics; "" when the client id cannot be a topic level
	threshold  time.Duration
	now        func() time.Time

	ids    sync.Map    // packet id (uint16) of pongs in flight -> struct{}
	warned atomic.Bool // once per Server
	// pongs left to send in the current probe: any client may publish to
	// the ping topic, so the service answers no more than the probe asks.
	pongs atomic.Int32
}

func newBrokerProbe(clientID string, threshold time.Duration, now func() time.Time) *brokerProbe {
	p := &brokerProbe{threshold: threshold, now: now}
	if threshold == 0 {
		p.threshold = DefaultSlowBroker
	}
	if now == nil {
		p.now = time.Now
	}
	if clientID != "" && !strings.ContainsAny(clientID, "+#/\x00") {
		base := "clients/" + clientID + "/ssgen/probe/"
		p.ping, p.pong = base+"ping", base+"pong"
	}
	return p
}

// enabled reports whether a probe is worth running.
func (p *brokerProbe) enabled() bool {
	return p.ping != "" && p.threshold > 0 && !p.warned.Load()
}

// sent notes the packet id a pong went out with, so that its PUBACK (a
// refusal by an ACL included) is not reported as a refused response.
func (p *brokerProbe) sent(pk session.Packet) {
	if pub, ok := pk.(*packets.Publish); ok && p.pong != "" && pub.Topic == p.pong {
		p.ids.Store(pub.PacketID, struct{}{})
	}
}

// acked reports whether a PUBACK is a pong's.
func (p *brokerProbe) acked(pa *packets.Puback) bool {
	_, ok := p.ids.LoadAndDelete(pa.PacketID)
	return ok
}

// received answers a ping on the service's connection, off paho's
// delivery goroutine; false for other topics.
func (x *external) probeReceived(pk *paho.Publish) bool {
	p := x.prober
	if p.ping == "" || pk.Topic != p.ping {
		return false
	}
	if len(pk.Payload) != 8 || p.pongs.Add(-1) < 0 {
		return true // not a probe's ping, or more of them than the probe sends
	}
	payload := pk.Payload
	go func() { _ = x.publish(&paho.Publish{QoS: 1, Topic: p.pong, Payload: payload}) }()
	return true
}

// probe times probeRounds round trips through the broker, one after the
// other, and warns once when the fastest of the last probeCounted took
// longer than the threshold.
// Any failure just ends it: the probe is advice.
func (x *external) probe(ctx context.Context, c *paho.Client) {
	p := x.prober
	ctx, cancel := context.WithTimeout(ctx, probeTimeout*probeRounds)
	defer cancel()
	ctx, stop := pahoctx.Bound(ctx, c)
	defer stop()
	skip := func(why string, err error) {
		x.s.log.Debug("broker round trip not measured", "reason", why, "error", err)
	}
	sub, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: p.ping, QoS: 1}}})
	if err != nil || len(sub.Reasons) != 1 || sub.Reasons[0] >= 0x80 {
		skip("ping subscription refused", err)
		return
	}
	defer func() {
		uctx, ucancel := context.WithTimeout(context.Background(), probeTimeout)
		defer ucancel()
		uctx, ustop := pahoctx.Bound(uctx, c)
		defer ustop()
		_, _ = c.Unsubscribe(uctx, &paho.Unsubscribe{Topics: []string{p.ping}})
	}()
	p.ids.Clear() // ids of pongs a dropped connection never acknowledged
	p.pongs.Store(probeRounds)
	defer p.pongs.Store(0)

	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", x.hostport)
	if err != nil {
		skip("dial", err)
		return
	}
	pongs := make(chan uint64, probeRounds)
	pc := paho.NewClient(paho.ClientConfig{
		ClientID: x.clientID + "-probe",
		Conn:     bufconn.New(conn),
		Session:  pahostore.NewState(),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			if pr.Packet.Topic == p.pong && len(pr.Packet.Payload) == 8 {
				select {
				case pongs <- binary.BigEndian.Uint64(pr.Packet.Payload):
				default:
				}
			}
			return true, nil
		}},
	})
	if _, err := pc.Connect(ctx, &paho.Connect{ClientID: x.clientID + "-probe", CleanStart: true, KeepAlive: keepAlive}); err != nil {
		conn.Close()
		skip("connect", err)
		return
	}
	defer func() {
		_ = pc.Disconnect(&paho.Disconnect{})
		<-pc.Done()
	}()
	sub, err = pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: p.pong, QoS: 1}}})
	if err != nil || len(sub.Reasons) != 1 || sub.Reasons[0] >= 0x80 {
		skip("pong subscription refused", err)
		return
	}
	var fastest time.Duration
	for seq := uint64(1); seq <= probeRounds; seq++ {
		var payload [8]byte
		binary.BigEndian.PutUint64(payload[:], seq)
		start := p.now()
		_, err := pc.PublishWithOptions(ctx, &paho.Publish{QoS: 1, Topic: p.ping, Payload: payload[:]},
			paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
		if err != nil {
			skip("ping", err)
			return
		}
		for back := false; !back; {
			select {
			case got := <-pongs:
				back = got == seq
			case <-ctx.Done():
				skip("no pong", ctx.Err())
				return
			}
		}
		if rtt := p.now().Sub(start); seq > probeRounds-probeCounted && (fastest == 0 || rtt < fastest) {
			fastest = rtt
		}
	}
	x.s.log.Debug("broker round trip measured", "fastest", fastest, "rounds", probeCounted)
	if fastest > p.threshold && p.warned.CompareAndSwap(false, true) {
		x.s.log.Warn("the broker takes long to pass a request and its answer on, and every client's request waits as long: "+
			"if it is mosquitto, set set_tcp_nodelay true in its configuration (it keeps Nagle's algorithm on by default)",
			"broker", x.hostport, "round_trip", fastest, "threshold", p.threshold)
	}
}
