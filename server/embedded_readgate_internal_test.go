package server

import (
	"testing"
	"time"
)

// A notification waits while the read goroutine is between a processed
// packet and its next read, and the read goroutine waits while a
// notification is being handed over; closing the connection releases both.
func TestReadGateExcludesBothWaysAndOpensOnClose(t *testing.T) {
	g := newReadGate()

	g.enter() // the read goroutine is in the stretch
	passed := make(chan struct{})
	go g.pass(func() { close(passed) })
	select {
	case <-passed:
		t.Fatal("a notification passed while the read goroutine was in the stretch")
	case <-time.After(50 * time.Millisecond):
	}
	g.leave()
	waitClosed(t, passed, "the notification after leave")

	inside, release := make(chan struct{}), make(chan struct{})
	go g.pass(func() { close(inside); <-release })
	waitClosed(t, inside, "the notification")
	entered := make(chan struct{})
	go func() { g.enter(); close(entered) }()
	select {
	case <-entered:
		t.Fatal("the read goroutine entered while a notification was being handed over")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	waitClosed(t, entered, "the read goroutine after the notification")

	g.close() // the connection closes with the read goroutine in the stretch
	passed = make(chan struct{})
	go g.pass(func() { close(passed) })
	waitClosed(t, passed, "a notification after close")
	g.enter() // a late packet on a closed connection must not shut the gate
	passed = make(chan struct{})
	go g.pass(func() { close(passed) })
	waitClosed(t, passed, "a notification after a late enter")
	g.leave() // harmless when not in the stretch
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s never got through", what)
	}
}
