package server_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestNewRejectsInvalidOptions(t *testing.T) {
	for _, o := range []server.Options{
		{Listen: "no-port"},
		{Broker: "http://127.0.0.1:1883"},
		{Broker: "mqtt://"},
		{Broker: "mqtt://127.0.0.1:1883/path"},
		{MaxKeys: -1},
		{MaxBytes: -1},
	} {
		if _, err := server.New(o); !errors.Is(err, server.ErrInvalidOptions) {
			t.Errorf("%+v: error %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestServerLifecycle(t *testing.T) {
	s, err := server.New(server.Options{Listen: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, port, _ := net.SplitHostPort(s.Addr()); port == "0" || port == "" {
		t.Fatalf("Addr %q is not the bound address", s.Addr())
	}
	if s.URL() != "mqtt://"+s.Addr() {
		t.Fatalf("URL %q", s.URL())
	}
	if err := s.Start(); !errors.Is(err, server.ErrStarted) {
		t.Fatalf("second Start: %v", err)
	}

	// The port is taken while s runs.
	s2, _ := server.New(server.Options{Listen: s.Addr(), Logger: quiet})
	if err := s2.Start(); err == nil {
		s2.Close()
		t.Fatal("Start on a taken port succeeded")
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Start(); !errors.Is(err, server.ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

func TestExternalStartFailsWithoutABroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, err := server.New(server.Options{Broker: "mqtt://" + addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Start()
	if !errors.Is(err, server.ErrConnect) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Start: %v, want ErrConnect naming %s", err, addr)
	}
	if s.URL() != "mqtt://"+addr {
		t.Fatalf("URL %q", s.URL())
	}
}
