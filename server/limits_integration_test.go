package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

func withLimits(l server.Limits) func(*server.Options) {
	return func(o *server.Options) { o.Limits = l }
}

const quota = "-ERR the quota has been exceeded\r\n"

func TestKeyAndValueLimitsAnswerQuotaAndChangeNothing(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("limits")
		long := strings.Repeat("k", 9)
		checkResponse(t, c.do("SET", long, "v"), quota, false)
		checkResponse(t, c.do("GET", long), quota, false)
		checkResponse(t, c.do("KEYNOTIFY", long), quota, false)
		checkResponse(t, c.do("SET", "k", "12345"), quota, false)
		checkResponse(t, c.do("SET", "k", "1234"), "+OK\r\n", true)
		checkResponse(t, c.do("SET", "k", "12345"), quota, false)
		checkResponse(t, c.do("GET", "k"), "$4\r\n1234\r\n", true)
		if n := e.srv.Engine().Len(); n != 1 {
			t.Fatalf("%d keys, want 1", n)
		}
	}, withLimits(server.Limits{MaxKeyBytes: 8, MaxValueBytes: 4}))
}

func TestWatchLimitPerClient(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, e *env) {
		a, b := e.connect("watcher-a"), e.connect("watcher-b")
		checkResponse(t, a.do("KEYNOTIFY", "k1"), "+OK\r\n", true)
		checkResponse(t, a.do("KEYNOTIFY", "k2"), "+OK\r\n", true)
		checkResponse(t, a.do("KEYNOTIFY", "k3"), quota, false)
		checkResponse(t, b.do("KEYNOTIFY", "k3"), "+OK\r\n", true)
		if w := e.srv.Engine().Watchers([]byte("k3")); len(w) != 1 || w[0] != "watcher-b" {
			t.Fatalf("watchers of k3: %v", w)
		}
	}, withLimits(server.Limits{MaxWatchesPerClient: 2}))
}

func TestConnackAnnouncesPacketSizeAndReceiveMaximum(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxPacketBytes: 4096, MaxInflight: 7})})
	conn, err := dialConn(t, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	pc := paho.NewClient(paho.ClientConfig{ClientID: "caps", Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := pc.Connect(ctx, &paho.Connect{ClientID: "caps", CleanStart: true, KeepAlive: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Disconnect(&paho.Disconnect{}) })
	if p := ack.Properties; p == nil || p.MaximumPacketSize == nil || *p.MaximumPacketSize != 4096 || p.ReceiveMaximum == nil || *p.ReceiveMaximum != 7 {
		t.Fatalf("CONNACK properties %v, want Maximum Packet Size 4096 and Receive Maximum 7", ack.Properties)
	}
}

// The broker refuses an oversized packet from its fixed header alone: it
// closes the connection without waiting for (or allocating) the announced
// body. mochi sends no DISCONNECT first; one with 0x95 would do too.
func TestOversizedPacketDisconnectsBeforeItsBodyArrives(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxPacketBytes: 4096})})
	u, _ := url.Parse(e.srv.URL())
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	cp := packets.NewControlPacket(packets.CONNECT).Content.(*packets.Connect)
	cp.ProtocolName, cp.ProtocolVersion, cp.ClientID, cp.CleanStart, cp.KeepAlive = "MQTT", 5, "big", true, 30
	if _, err := cp.WriteTo(conn); err != nil {
		t.Fatal(err)
	}
	if pk, err := packets.ReadPacket(conn); err != nil || pk.Type != packets.CONNACK {
		t.Fatalf("CONNACK: %v %v", pk, err)
	}
	// PUBLISH QoS 1 announcing 100 MiB (variable byte integer 0x80 0x80 0x80 0x32),
	// followed by a few bytes only.
	if _, err := conn.Write([]byte{0x32, 0x80, 0x80, 0x80, 0x32, 0x00, 0x01, 'x'}); err != nil {
		t.Fatal(err)
	}
	for {
		pk, err := packets.ReadPacket(conn)
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || err != nil && strings.Contains(err.Error(), "reset") {
			return
		}
		if err != nil {
			t.Fatalf("waiting for the broker to close: %v", err)
		}
		if d, ok := pk.Content.(*packets.Disconnect); ok {
			if d.ReasonCode != 0x95 {
				t.Fatalf("DISCONNECT 0x%02x, want 0x95", d.ReasonCode)
			}
			return
		}
	}
}

func TestInvalidLimitsAreRefused(t *testing.T) {
	for _, l := range []server.Limits{{MaxKeyBytes: -1}, {MaxInflight: 65536}, {MaxPacketBytes: 1 << 28}} {
		if _, err := server.New(server.Options{Listen: "127.0.0.1:0", Limits: l}); !errors.Is(err, server.ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", l, err)
		}
	}
	if _, err := server.New(server.Options{Broker: "mqtt://127.0.0.1:1", Limits: server.Limits{MaxInflight: 5}}); !errors.Is(err, server.ErrInvalidOptions) {
		t.Errorf("MaxInflight in external mode: %v, want ErrInvalidOptions", err)
	}
	if _, err := server.New(server.Options{Broker: "mqtt://127.0.0.1:1", Security: server.Security{AllowAnonymous: true}}); !errors.Is(err, server.ErrInvalidOptions) {
		t.Errorf("security in external mode: %v, want ErrInvalidOptions", err)
	}
}

// Issue #25: the per-client watch quota used to default to unlimited (a
// pattern watch over 12,000 keys others created held 9,690
// registrations). By default a client holds at most
// DefaultMaxWatchesPerClient; one more is answered with the quota text,
// and a negative limit lifts it.
func TestWatchLimitPerClientHasADefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		want  string
	}{
		{"default", 0, quota},
		{"unlimited", -1, "+OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			embeddedOnly(t, func(t *testing.T, e *env) {
				c := e.connect("many-watches")
				eng := e.srv.Engine()
				for i := range server.DefaultMaxWatchesPerClient {
					res := eng.Handle(engine.Request{Client: "many-watches", Args: [][]byte{[]byte("KEYNOTIFY"), fmt.Appendf(nil, "w/%05d", i)}})
					if string(res.Payload) != "+OK\r\n" {
						t.Fatalf("registration %d: %q", i, res.Payload)
					}
				}
				checkResponse(t, c.do("KEYNOTIFY", "w/one-more"), tc.want, tc.want != quota)
				checkResponse(t, c.do("KEYNOTIFY", "w/00000"), "+OK\r\n", true) // renewing passes
				checkResponse(t, e.connect("other").do("KEYNOTIFY", "w/one-more"), "+OK\r\n", true)
			}, withLimits(server.Limits{MaxWatchesPerClient: tc.limit}))
		})
	}
}
