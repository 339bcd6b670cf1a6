package servertest_test

import (
	"net"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/brokertest"
	"github.com/ssgen/ssgen/server"
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
