// Package testwait is the one polling loop the tests share: Until checks a
// condition every few milliseconds and fails the test when a bound passes.
// The bound is generous and per package; no test asserts how long anything
// took.
package testwait

import (
	"testing"
	"time"
)

// interval is how often Until checks its condition.
const interval = 5 * time.Millisecond

// Until polls cond until it holds, failing t (Fatalf, naming what) once
// bound has passed without it.
func Until(t testing.TB, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(interval)
	}
}
