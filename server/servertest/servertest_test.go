package servertest_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestNewServesOnAFreeLoopbackPort(t *testing.T) {
	s := servertest.New(t, servertest.WithOptions(func(o *server.Options) { o.MaxKeys = 3 }))
	if !strings.HasPrefix(s.URL(), "mqtt://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0") {
		t.Fatalf("URL %q", s.URL())
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestNewExternalAttachesToTheBroker(t *testing.T) {
	url := brokertest.Mosquitto(t)
	if s := servertest.NewExternal(t, url); s.URL() != url {
		t.Fatalf("URL %q, want the broker's %q", s.URL(), url)
	}
}

func TestWithClockDrivesExpiry(t *testing.T) {
	clock := engine.NewFakeClock(time.Now())
	s := servertest.New(t, servertest.WithClock(clock))
	if err := s.Engine().Put([]byte("k"), []byte("v"), engine.PutOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	s.Engine().Expire()
	if _, ok := s.Engine().Lookup([]byte("k")); ok {
		t.Fatal("key outlived its TTL on the fake clock")
	}
}

func TestWithFaultInjectionRefusesOnRequest(t *testing.T) {
	s := servertest.New(t, servertest.WithFaultInjection())
	conn, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pc := paho.NewClient(paho.ClientConfig{ClientID: "faulty", Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ca, err := pc.Connect(ctx, &paho.Connect{ClientID: "faulty", CleanStart: true, Properties: &paho.ConnectProperties{
		User: paho.UserProperties{{Key: protocol.FaultRejectConnect, Value: "137"}},
	}})
	if err == nil || ca == nil || ca.ReasonCode != 0x89 {
		t.Fatalf("CONNACK %+v, %v; want 0x89", ca, err)
	}
}

func TestWithChaosStartsWithRules(t *testing.T) {
	s := servertest.New(t, servertest.WithChaos(server.ChaosRule{Name: "x", Effect: server.ChaosDrop}))
	if st := s.Chaos(); len(st) != 1 || st[0].Name != "x" {
		t.Fatalf("rules %+v", st)
	}
}
