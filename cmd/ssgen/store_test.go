package main

import (
	"testing"

	"github.com/ssgen/ssgen/server/servertest"
)

// testStore starts an embedded state store for one test and returns its
// broker URL; it is closed when the test ends.
func testStore(t *testing.T) string {
	t.Helper()
	return servertest.New(t).URL()
}
