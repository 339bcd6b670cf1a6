package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
)

func userProps(kv ...string) []packets.UserProperty {
	var out []packets.UserProperty
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, packets.UserProperty{Key: kv[i], Val: kv[i+1]})
	}
	return out
}

func TestPlanFault(t *testing.T) {
	for _, c := range []struct {
		name    string
		kind    faultKind
		props   []string
		action  faultAction
		code    byte
		delay   time.Duration
		ignored string // a substring of the reason, when ignored
	}{
		{"nothing", faultPublish, nil, faultNone, 0, 0, ""},
		{"disconnect", faultPublish, []string{protocol.FaultDisconnect, "152"}, faultDisconnect, 0x98, 0, ""},
		{"disconnect normal", faultSubscribe, []string{protocol.FaultDisconnect, "0"}, faultDisconnect, 0, 0, ""},
		{"disconnect later", faultUnsubscribe, []string{protocol.FaultDisconnect, "152", protocol.FaultDelay, "3"}, faultLater, 0x98, 3 * time.Second, ""},
		{"delay zero", faultPublish, []string{protocol.FaultDelay, "0", protocol.FaultDisconnect, "130"}, faultLater, 0x82, 0, ""},
		{"delay alone", faultPublish, []string{protocol.FaultDelay, "3"}, faultNone, 0, 0, ""},
		{"disconnect wins over reject", faultPublish, []string{protocol.FaultRejectPublish, "135", protocol.FaultDisconnect, "152"}, faultDisconnect, 0x98, 0, ""},
		{"first property counts", faultPublish, []string{protocol.FaultDisconnect, "152", protocol.FaultDisconnect, "x"}, faultDisconnect, 0x98, 0, ""},
		{"reject publish", faultPublish, []string{protocol.FaultRejectPublish, "151"}, faultReject, 0x97, 0, ""},
		{"reject subscribe", faultSubscribe, []string{protocol.FaultRejectSubscribe, "162"}, faultReject, 0xA2, 0, ""},
		{"reject unsubscribe", faultUnsubscribe, []string{protocol.FaultRejectUnsubscribe, "143"}, faultReject, 0x8F, 0, ""},
		{"reject connect", faultConnect, []string{protocol.FaultRejectConnect, "137"}, faultReject, 0x89, 0, ""},
		{"reject of another packet", faultPublish, []string{protocol.FaultRejectSubscribe, "135"}, faultNone, 0, 0, ""},
		{"disconnect on connect", faultConnect, []string{protocol.FaultDisconnect, "152"}, faultNone, 0, 0, ""},
		{"name case", faultPublish, []string{"Fault:Disconnect", "152"}, faultNone, 0, 0, ""},
		{"hex", faultPublish, []string{protocol.FaultDisconnect, "0x98"}, faultNone, 0, 0, "not a decimal"},
		{"sign", faultPublish, []string{protocol.FaultDisconnect, "+152"}, faultNone, 0, 0, "not a decimal"},
		{"space", faultPublish, []string{protocol.FaultDisconnect, " 152"}, faultNone, 0, 0, "not a decimal"},
		{"too big", faultPublish, []string{protocol.FaultDisconnect, "256"}, faultNone, 0, 0, "not a decimal"},
		{"client disconnect code", faultPublish, []string{protocol.FaultDisconnect, "4"}, faultNone, 0, 0, "0x04 is not a reason code a server sends"},
		{"success puback", faultPublish, []string{protocol.FaultRejectPublish, "16"}, faultNone, 0, 0, "0x10 is not a PUBACK reason code refusing"},
		{"granted qos", faultSubscribe, []string{protocol.FaultRejectSubscribe, "1"}, faultNone, 0, 0, "SUBACK"},
		{"puback code on connack", faultConnect, []string{protocol.FaultRejectConnect, "145"}, faultNone, 0, 0, "CONNACK"},
		{"negative delay", faultPublish, []string{protocol.FaultDisconnect, "152", protocol.FaultDelay, "-1"}, faultNone, 0, 0, "fault:delay"},
		{"delay too long", faultPublish, []string{protocol.FaultDisconnect, "152", protocol.FaultDelay, "86401"}, faultNone, 0, 0, "fault:delay"},
		{"longest delay", faultPublish, []string{protocol.FaultDisconnect, "152", protocol.FaultDelay, "86400"}, faultLater, 0x98, 24 * time.Hour, ""},
		{"bad disconnect spoils a good reject", faultPublish, []string{protocol.FaultRejectPublish, "135", protocol.FaultDisconnect, "x"}, faultNone, 0, 0, "fault:disconnect"},
		{"bad delay without disconnect", faultPublish, []string{protocol.FaultRejectPublish, "135", protocol.FaultDelay, "x"}, faultReject, 0x87, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planFault(c.kind, userProps(c.props...))
			if p.action != c.action || p.code != c.code || p.delay != c.delay {
				t.Errorf("plan %+v, want action %d code 0x%02X delay %v", p, c.action, c.code, c.delay)
			}
			if (c.ignored == "") != (p.ignored == "") || !strings.Contains(p.ignored, c.ignored) {
				t.Errorf("ignored %q, want it to say %q", p.ignored, c.ignored)
			}
		})
	}
}

func TestPlanFaultRequestID(t *testing.T) {
	p := planFault(faultPublish, userProps(protocol.FaultRequestID, "", protocol.FaultRequestID, "second"))
	if !p.hasID || p.id != "" {
		t.Fatalf("request id %q (%v), want the first, empty one", p.id, p.hasID)
	}
	if p := planFault(faultPublish, userProps("other", "x")); p.hasID {
		t.Fatal("request id without the property")
	}
}

func TestIDMemoryForgetsTheLeastRecentlySeen(t *testing.T) {
	m := newIDMemory(3)
	for _, id := range []string{"a", "b", "c"} {
		if !m.first(id) {
			t.Fatalf("%s seen before", id)
		}
	}
	if m.first("a") { // a is now the most recent
		t.Fatal("a not remembered")
	}
	if !m.first("d") { // forgets b
		t.Fatal("d seen before")
	}
	if !m.first("b") {
		t.Fatal("b still remembered past the bound")
	}
	if m.first("a") {
		t.Fatal("a forgotten although seen recently")
	}
	if m.order.Len() != 3 || len(m.at) != 3 {
		t.Fatalf("holds %d/%d ids, want 3", m.order.Len(), len(m.at))
	}
	// Any id costs one digest.
	big := strings.Repeat("x", 1<<20)
	if !m.first(big) || m.first(big) {
		t.Fatal("a long id not remembered")
	}
}

func TestFaultCodeSetsAreRefusals(t *testing.T) {
	for k, set := range refusals {
		for c := range 256 {
			if set[c] && c < 0x80 {
				t.Errorf("%s: 0x%02X is not a refusal", faultKind(k).ack(), c)
			}
		}
	}
	if !disconnectCodes[0] || disconnectCodes[4] {
		t.Error("DISCONNECT: 0x00 is a server's, 0x04 a client's")
	}
}

func FuzzPlanFault(f *testing.F) {
	f.Add(uint8(1), protocol.FaultDisconnect, "152", protocol.FaultDelay, "1")
	f.Add(uint8(0), protocol.FaultRejectConnect, "137", protocol.FaultRequestID, "id")
	f.Add(uint8(2), protocol.FaultRejectSubscribe, "999999999999999999999", "", "")
	f.Add(uint8(3), protocol.FaultRejectUnsubscribe, "\xff", protocol.FaultDelay, "-0")
	f.Fuzz(func(t *testing.T, kind uint8, k1, v1, k2, v2 string) {
		k := faultKind(kind % uint8(faultKinds))
		p := planFault(k, userProps(k1, v1, k2, v2))
		switch p.action {
		case faultNone:
		case faultDisconnect, faultLater:
			if k == faultConnect || !disconnectCodes[p.code] || p.ignored != "" {
				t.Fatalf("%s: %+v", k, p)
			}
		case faultReject:
			if !refusals[k][p.code] || p.ignored != "" {
				t.Fatalf("%s: %+v", k, p)
			}
		}
		if p.delay < 0 || p.delay > MaxFaultDelay {
			t.Fatalf("delay %v", p.delay)
		}
	})
}

// Attack: a client asks for more delayed disconnects than the server
// keeps (a day each, so none fires): past its share,
// maxPendingFaultsPerClient, they are ignored, so another client still
// gets its own; past maxPendingFaults over all clients, too; and a
// client's disconnect forgets its own.
func TestDelayedDisconnectsAreBounded(t *testing.T) {
	srv, err := New(Options{Listen: "127.0.0.1:0", FaultInjection: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.tr.(*embedded).faults
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dial := func(id string) *paho.Client {
		conn, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pc := paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn})
		if _, err := pc.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
			t.Fatal(err)
		}
		return pc
	}
	ask := func(pc *paho.Client, n int) {
		for i := range n {
			if _, err := pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: "t", Payload: []byte("x"), Properties: &paho.PublishProperties{
				User: paho.UserProperties{{Key: protocol.FaultDisconnect, Value: "152"}, {Key: protocol.FaultDelay, Value: "86400"}},
			}}); err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
	}
	pending := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.pending
	}
	flood := dial("flood")
	ask(flood, maxPendingFaultsPerClient+10)
	if n := pending(); n != maxPendingFaultsPerClient {
		t.Fatalf("one client has %d delayed disconnects waiting, want its share %d", n, maxPendingFaultsPerClient)
	}
	other := dial("other")
	ask(other, 1)
	if n := pending(); n != maxPendingFaultsPerClient+1 {
		t.Fatalf("%d delayed disconnects waiting, want the other client's one added", n)
	}
	// Enough clients to fill the server's bound.
	var all []*paho.Client
	for i := 0; pending() < maxPendingFaults; i++ {
		pc := dial(fmt.Sprintf("fill-%d", i))
		all = append(all, pc)
		ask(pc, maxPendingFaultsPerClient)
	}
	if n := pending(); n != maxPendingFaults {
		t.Fatalf("%d delayed disconnects waiting, want the bound %d", n, maxPendingFaults)
	}
	for _, pc := range append(all, flood, other) {
		_ = pc.Disconnect(&paho.Disconnect{})
	}
	testwait.Until(t, 10*time.Second, "the clients' delayed disconnects forgotten", func() bool { return pending() == 0 })
}
