package main

import (
	"testing"

	"github.com/ssgen/ssgen/internal/brokertest"
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
