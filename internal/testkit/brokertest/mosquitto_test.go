package brokertest

import (
	"net"
	"strings"
	"testing"
)

func TestMosquittoAcceptsConnectionsAndRestartsOnTheSamePort(t *testing.T) {
	b := Start(t)
	if !strings.HasPrefix(b.URL(), "mqtt://127.0.0.1:") {
		t.Fatalf("URL = %q", b.URL())
	}
	dial := func() error {
		c, err := net.Dial("tcp", b.Addr())
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	if err := dial(); err == nil {
		t.Fatal("stopped broker still accepts connections")
	}
	b.Restart()
	if err := dial(); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}
