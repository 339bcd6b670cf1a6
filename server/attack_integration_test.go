package server_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// Tests of the embedded broker under attack (issue "Resilience under
// attack"): each limit is set small, the attack is made with raw
// connections, and a well-behaved client is served meanwhile.

func dialRaw(t *testing.T, srv *server.Server) net.Conn {
	t.Helper()
	u, _ := url.Parse(srv.URL())
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(wait))
	return conn
}

// sendConnect writes an MQTT 5 CONNECT asking for expiry seconds of
// session expiry.
func sendConnect(t *testing.T, conn net.Conn, id string, clean bool, expiry uint32) {
	t.Helper()
	cp := packets.NewControlPacket(packets.CONNECT).Content.(*packets.Connect)
	cp.ProtocolName, cp.ProtocolVersion, cp.ClientID, cp.CleanStart, cp.KeepAlive = "MQTT", 5, id, clean, 30
	cp.Properties = &packets.Properties{SessionExpiryInterval: &expiry}
	if _, err := cp.WriteTo(conn); err != nil {
		t.Fatalf("write CONNECT: %v", err)
	}
}

func readConnack(t *testing.T, conn net.Conn) *packets.Connack {
	t.Helper()
	pk, err := packets.ReadPacket(conn)
	if err != nil {
		t.Fatalf("read CONNACK: %v", err)
	}
	ca, ok := pk.Content.(*packets.Connack)
	if !ok {
		t.Fatalf("want CONNACK, got %v", pk)
	}
	return ca
}

// rawConnect connects id over a new raw connection and returns it after
// a successful CONNACK.
func rawConnect(t *testing.T, srv *server.Server, id string, clean bool, expiry uint32) (net.Conn, *packets.Connack) {
	t.Helper()
	conn := dialRaw(t, srv)
	sendConnect(t, conn, id, clean, expiry)
	ca := readConnack(t, conn)
	if ca.ReasonCode != 0 {
		t.Fatalf("%s: CONNACK 0x%02x", id, ca.ReasonCode)
	}
	return conn, ca
}

// closedByServer reads conn until the server closes it (any packets it
// sends first are skipped), failing on the test's own read deadline.
func closedByServer(t *testing.T, conn net.Conn, what string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: still open", what)
	}
}

// wellBehaved checks that an ordinary client is served.
func wellBehaved(t *testing.T, e *env, id string) {
	t.Helper()
	checkResponse(t, e.connect(id).do("GET", "absent"), "$-1\r\n", false)
}

func TestConnectionWithoutConnectIsClosedAtTheDeadline(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{ConnectTimeout: 100 * time.Millisecond})})
	silent := dialRaw(t, e.srv)
	slow := dialRaw(t, e.srv)
	if _, err := slow.Write([]byte{0x10, 0x80}); err != nil { // a CONNECT header, never finished
		t.Fatal(err)
	}
	wellBehaved(t, e, "bystander")
	closedByServer(t, silent, "a connection that sent nothing")
	closedByServer(t, slow, "a connection that never finished CONNECT")
	waitFor(t, "two CONNECT timeouts counted", func() bool { return e.srv.Stats().ConnectTimeouts == 2 })
	// The deadline is gone once CONNECT is done: a connected client idles
	// on, under its keep-alive.
	conn, _ := rawConnect(t, e.srv, "idle", true, 0)
	wellBehaved(t, e, "bystander2")
	if _, err := (&packets.Pingreq{}).WriteTo(conn); err != nil {
		t.Fatal(err)
	}
	if pk, err := packets.ReadPacket(conn); err != nil || pk.Type != packets.PINGRESP {
		t.Fatalf("idle client after the CONNECT deadline: %v %v", pk, err)
	}
}

func TestConnectLargerThanTheLimitIsClosedBeforeItsBody(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxConnectBytes: 1024})})
	conn := dialRaw(t, e.srv)
	// A CONNECT header declaring 1 MiB; the body is never sent, so only a
	// check of the header can close the connection.
	if _, err := conn.Write([]byte{0x10, 0x80, 0x80, 0x40}); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, conn, "a 1 MiB CONNECT")
	if got := e.srv.Stats().ConnectTooLarge; got != 1 {
		t.Fatalf("ConnectTooLarge = %d", got)
	}
	// A CONNECT within the limit, with a 600-byte user property, passes.
	conn = dialRaw(t, e.srv)
	cp := packets.NewControlPacket(packets.CONNECT).Content.(*packets.Connect)
	cp.ProtocolName, cp.ProtocolVersion, cp.ClientID, cp.CleanStart = "MQTT", 5, "fits", true
	cp.Properties = &packets.Properties{User: []packets.User{{Key: "k", Value: string(bytes.Repeat([]byte("v"), 600))}}}
	if _, err := cp.WriteTo(conn); err != nil {
		t.Fatal(err)
	}
	if ca := readConnack(t, conn); ca.ReasonCode != 0 {
		t.Fatalf("CONNACK 0x%02x", ca.ReasonCode)
	}
	wellBehaved(t, e, "bystander")
}

func TestConnectionLimitsRefuseWithQuotaExceeded(t *testing.T) {
	t.Run("total", func(t *testing.T) {
		e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxConnections: 2, MaxConnectionsPerIP: 100})})
		first, _ := rawConnect(t, e.srv, "a", true, 0)
		rawConnect(t, e.srv, "b", true, 0)
		refused := dialRaw(t, e.srv) // third: within the margin, answered
		waitFor(t, "the third connection counted", func() bool { return e.srv.Stats().Connections == 3 })
		closedByServer(t, dialRaw(t, e.srv), "a fourth connection, past the margin") // closed at accept
		sendConnect(t, refused, "c", true, 0)
		if ca := readConnack(t, refused); ca.ReasonCode != 0x97 {
			t.Fatalf("third connection: CONNACK 0x%02x, want 0x97", ca.ReasonCode)
		}
		closedByServer(t, refused, "the refused connection")
		if got := e.srv.Stats().ConnectionsRefused; got != 2 {
			t.Fatalf("ConnectionsRefused = %d, want 2", got)
		}
		first.Close()
		waitFor(t, "connections released", func() bool { return e.srv.Stats().Connections == 1 })
		rawConnect(t, e.srv, "d", true, 0)
	})
	t.Run("per address", func(t *testing.T) {
		e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxConnectionsPerIP: 1})})
		conn, _ := rawConnect(t, e.srv, "a", true, 0)
		refused := dialRaw(t, e.srv)
		sendConnect(t, refused, "b", true, 0)
		if ca := readConnack(t, refused); ca.ReasonCode != 0x97 {
			t.Fatalf("second connection from one address: CONNACK 0x%02x, want 0x97", ca.ReasonCode)
		}
		conn.Close()
		waitFor(t, "connections released", func() bool { return e.srv.Stats().Connections == 0 })
		wellBehaved(t, e, "after")
	})
}

func TestSessionExpiryIsCappedAndAnnounced(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxSessionExpiry: 90 * time.Second})})
	_, ca := rawConnect(t, e.srv, "sdk", false, 0xFFFFFFFF)
	if p := ca.Properties; p == nil || p.SessionExpiryInterval == nil || *p.SessionExpiryInterval != 90 {
		t.Fatalf("CONNACK Session Expiry Interval: %+v, want 90", ca.Properties)
	}
	_, ca = rawConnect(t, e.srv, "short", false, 30)
	if p := ca.Properties; p != nil && p.SessionExpiryInterval != nil {
		t.Fatalf("a request below the cap is granted as is, yet CONNACK says %d", *p.SessionExpiryInterval)
	}
}

// Past MaxSessions, the session disconnected longest ends; the others
// are kept, as a reconnect's Session Present shows.
func TestKeptSessionsPastTheLimitEndTheOldest(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxSessions: 2})})
	for i, id := range []string{"s1", "s2", "s3"} {
		conn, _ := rawConnect(t, e.srv, id, true, 3600)
		conn.Close() // no DISCONNECT: the session is kept
		waitFor(t, id+" kept", func() bool {
			st := e.srv.Stats()
			return st.KeptSessions == min(i+1, 2) && st.SessionsEvicted == int64(max(i-1, 0))
		})
	}
	if _, ca := rawConnect(t, e.srv, "s1", false, 3600); ca.SessionPresent {
		t.Fatal("the oldest session is still present")
	}
	if _, ca := rawConnect(t, e.srv, "s3", false, 3600); !ca.SessionPresent {
		t.Fatal("the newest session was ended")
	}
	wellBehaved(t, e, "bystander")
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A client that reads its answers but never acknowledges them is cut off
// once they add up to MaxClientOutputBytes, its session ends, and the
// memory they held is freed.
func TestClientThatNeverAcknowledgesIsDisconnectedAtItsOutputLimit(t *testing.T) {
	const value, limit, gets = 1 << 20, 4 << 20, 48
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxClientOutputBytes: limit})})
	if err := e.srv.Engine().Put([]byte("big"), bytes.Repeat([]byte("x"), value), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	before := heapAfterGC()
	conn, _ := rawConnect(t, e.srv, "hoarder", true, 3600)
	r := &rawSession{t: t, conn: conn}
	respTopic := ownResponseTopic("hoarder")
	r.write(&packets.Subscribe{PacketID: 1, Subscriptions: []packets.SubOptions{{Topic: respTopic, QoS: 1}}})
	if pk := r.read(); pk.Type != packets.SUBACK {
		t.Fatalf("want SUBACK, got %v", pk)
	}
	// Requests are written by another goroutine: the server stops reading
	// them once it has cut the client off.
	go func() {
		for i := range gets {
			pk := &packets.Publish{PacketID: uint16(10 + i), QoS: 1, Topic: server.RequestTopic, Payload: cmd("GET", "big"),
				Properties: &packets.Properties{ResponseTopic: respTopic, CorrelationData: []byte{byte(i)}}}
			if _, err := pk.WriteTo(conn); err != nil {
				return
			}
		}
	}()
	answers, code := 0, byte(0)
	for code == 0 {
		pk, err := packets.ReadPacket(conn)
		if err != nil {
			break // the DISCONNECT may not make it before the close
		}
		switch p := pk.Content.(type) {
		case *packets.Publish:
			answers++ // never acknowledged
		case *packets.Disconnect:
			code = p.ReasonCode
		}
	}
	if code != 0 && code != 0x97 {
		t.Fatalf("DISCONNECT 0x%02x, want 0x97", code)
	}
	if answers >= gets {
		t.Fatalf("all %d answers delivered unacknowledged", answers)
	}
	waitFor(t, "the output disconnect counted", func() bool { return e.srv.Stats().OutputDisconnects == 1 })
	wellBehaved(t, e, "bystander")
	if _, ca := rawConnect(t, e.srv, "hoarder", false, 3600); ca.SessionPresent {
		t.Fatal("the session of a client cut off for its output is still present")
	}
	// Without the limit the server would hold all 48 MiB of answers.
	if after := heapAfterGC(); after > before+16<<20 {
		t.Fatalf("heap grew from %d to %d bytes", before, after)
	}
}

// A watcher that stops reading its socket is cut off once the
// notifications it has not acknowledged reach MaxClientOutputBytes; the
// writer is served throughout.
func TestWatcherThatStopsReadingIsDisconnectedAtItsOutputLimit(t *testing.T) {
	const value, limit, sets = 256 << 10, 2 << 20, 32
	e := newEnv(t, "", []func(*server.Options){withLimits(server.Limits{MaxClientOutputBytes: limit})})
	conn, _ := rawConnect(t, e.srv, "sleeper", true, 3600)
	r := &rawSession{t: t, conn: conn}
	respTopic := ownResponseTopic("sleeper")
	r.write(&packets.Subscribe{PacketID: 1, Subscriptions: []packets.SubOptions{{Topic: respTopic, QoS: 1}}})
	if pk := r.read(); pk.Type != packets.SUBACK {
		t.Fatalf("want SUBACK, got %v", pk)
	}
	r.write(&packets.Publish{PacketID: 2, QoS: 1, Topic: server.RequestTopic, Payload: cmd("KEYNOTIFY", "hot"),
		Properties: &packets.Properties{ResponseTopic: respTopic, CorrelationData: []byte{1}}})
	for got := 0; got < 2; { // the PUBACK and the answer, in either order
		switch p := r.read().Content.(type) {
		case *packets.Puback:
			got++
		case *packets.Publish:
			if !bytes.Equal(p.Payload, []byte("+OK\r\n")) {
				t.Fatalf("KEYNOTIFY: %q", p.Payload)
			}
			r.write(&packets.Puback{PacketID: p.PacketID})
			got++
		}
	}
	// From here the watcher reads nothing.
	writer := e.connect("writer")
	payload := string(bytes.Repeat([]byte("v"), value))
	for range sets {
		checkResponse(t, writer.do("SET", "hot", payload), "+OK\r\n", true)
	}
	waitFor(t, "the watcher's output disconnect", func() bool { return e.srv.Stats().OutputDisconnects == 1 })
	closedByServer(t, conn, "the watcher")
	wellBehaved(t, e, "bystander")
}
