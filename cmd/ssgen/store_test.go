package main

import (
	"net"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/server/servertest"
)

// testStore starts an embedded state store for one test and returns its
// broker URL; it is closed when the test ends.
func testStore(t *testing.T) string {
	t.Helper()
	return servertest.New(t).URL()
}

// bothStores are the state stores a client verb's test runs against: the
// embedded server, and an external one attached to mosquitto. url starts
// one for the test and returns its broker URL.
var bothStores = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"embedded", testStore},
	{"mosquitto", func(t *testing.T) string {
		url := brokertest.Mosquitto(t)
		servertest.NewExternal(t, url)
		return url
	}},
}

// waitFor polls cond until it holds, failing the test after a generous
// bound; no test asserts how long anything took. It is this package's one
// way to wait for a condition or to retry an action until it succeeds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, what, cond)
}

// refusedAddr is a loopback address nothing listens on: a port just
// released by this process (a fixed port such as 1 may be taken).
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
