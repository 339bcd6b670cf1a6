package server_test

import (
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/ssgen/ssgen/server"
)

// rawSession is an MQTT 5 connection driven packet by packet, for what a
// well-behaved client library refuses to send.
type rawSession struct {
	t    *testing.T
	conn net.Conn
}

func newRawSession(t *testing.T, e *env, id string) *rawSession {
	t.Helper()
	u, _ := url.Parse(e.srv.URL())
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(wait))
	r := &rawSession{t: t, conn: conn}
	cp := packets.NewControlPacket(packets.CONNECT).Content.(*packets.Connect)
	cp.ProtocolName, cp.ProtocolVersion, cp.ClientID, cp.CleanStart, cp.KeepAlive = "MQTT", 5, id, true, 30
	r.write(cp)
	if pk := r.read(); pk.Type != packets.CONNACK {
		t.Fatalf("want CONNACK, got %v", pk)
	}
	return r
}

func (r *rawSession) write(p interface {
	WriteTo(io.Writer) (int64, error)
}) {
	r.t.Helper()
	if _, err := p.WriteTo(r.conn); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawSession) read() *packets.ControlPacket {
	r.t.Helper()
	pk, err := packets.ReadPacket(r.conn)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return pk
}

// A client that ignores the advertised Receive Maximum is neither cut off
// nor answered with an error: the broker reads one request at a time, so
// the excess waits in the socket (TCP flow control), and every request is
// answered in order.
func TestRequestsBeyondReceiveMaximumWaitAndAreAnsweredInOrder(t *testing.T) {
	const inflight, sent = 2, 8
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxInflight: inflight})})
	r := newRawSession(t, e, "greedy")
	const respTopic = "clients/greedy/resp"
	r.write(&packets.Subscribe{PacketID: 1, Subscriptions: []packets.SubOptions{{Topic: respTopic, QoS: 1}}})
	if pk := r.read(); pk.Type != packets.SUBACK {
		t.Fatalf("want SUBACK, got %v", pk)
	}
	for i := range sent {
		r.write(&packets.Publish{
			PacketID: uint16(10 + i), QoS: 1, Topic: server.RequestTopic,
			Payload: cmd("SET", "k", string(rune('a'+i))),
			Properties: &packets.Properties{
				ResponseTopic: respTopic, CorrelationData: []byte{byte(i)},
				User: []packets.User{{Key: "__ts", Value: e.stamp(0)}},
			},
		})
	}
	acks, next := 0, 0
	for acks < sent || next < sent {
		pk := r.read()
		switch p := pk.Content.(type) {
		case *packets.Puback:
			if p.ReasonCode >= 0x80 {
				t.Fatalf("PUBACK 0x%02x", p.ReasonCode)
			}
			acks++
		case *packets.Publish:
			if got := p.Properties.CorrelationData; len(got) != 1 || int(got[0]) != next {
				t.Fatalf("response %v, want correlation %d", got, next)
			}
			if string(p.Payload) != "+OK\r\n" {
				t.Fatalf("response %d: %q", next, p.Payload)
			}
			next++
			r.write(&packets.Puback{PacketID: p.PacketID})
		case *packets.Disconnect:
			t.Fatalf("disconnected: 0x%02x", p.ReasonCode)
		}
	}
	if ent, _ := e.srv.Engine().Lookup([]byte("k")); string(ent.Value) != string(rune('a'+sent-1)) {
		t.Fatalf("k = %q", ent.Value)
	}
}

// Declared lengths are not trusted: an array announcing a billion
// elements is a syntax error, found without allocating for it.
func TestHugeDeclaredArrayIsASyntaxError(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, e *env) {
		c := e.connect("liar")
		p := c.roundTrip(request{payload: []byte("*1000000000\r\n$3\r\nGET\r\n$1\r\nk\r\n")})
		checkResponse(t, p, "-ERR syntax error\r\n", false)
		p = c.roundTrip(request{payload: []byte("*2\r\n$3\r\nGET\r\n$1000000000\r\nk\r\n")})
		checkResponse(t, p, "-ERR syntax error\r\n", false)
	})
}
