package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// A request that no service receives (mosquitto's PUBACK 0x10, "no
// matching subscribers") is sent again until a state store attaches.
func TestRequestIsResentUntilAServiceSubscribes(t *testing.T) {
	b := brokertest.Start(t)
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute // the test, not the deadline, decides when to attach
	c := dialConfig(t, cfg)

	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), []byte("k"))
		done <- err
	}()
	for i := 0; c.Stats().NoService == 0; i++ {
		if i == 2000 {
			t.Fatal("no PUBACK 0x10 seen in 20 s")
		}
		select {
		case err := <-done:
			t.Fatalf("Get returned %v before any service attached", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	servertest.NewExternal(t, b.URL())
	select {
	case err := <-done:
		if !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Get after the service attached: %v, want ErrNotFound", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Get still waiting 30 s after the service attached")
	}
	if s := c.Stats(); s.Requests < 2 || s.NoService < 1 {
		t.Errorf("Stats = %+v, want the request sent at least twice", s)
	}
}

// A PUBACK refusing the request ends the call at once with a
// *BrokerError, not a timeout.
func TestPubackRefusalIsABrokerError(t *testing.T) {
	// Anonymous clients may receive (responses, notifications) but not
	// publish requests: mosquitto answers 0x87 (not authorized).
	b := brokertest.StartWithACL(t, "topic read #\n")
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute
	c := dialConfig(t, cfg)

	_, _, err := c.Get(context.Background(), []byte("k"))
	var be *runtime.BrokerError
	if !errors.As(err, &be) || be.Packet != "PUBACK" || be.ReasonCode != 0x87 || !errors.Is(err, runtime.ErrNotAuthorized) {
		t.Fatalf("Get: %v, want a PUBACK 0x87 BrokerError matching ErrNotAuthorized", err)
	}
	var te *runtime.TimeoutError
	if errors.As(err, &te) {
		t.Fatalf("Get: %v is a timeout", err)
	}
	if s := c.Stats(); s.InFlight != 0 || s.Errors != 1 {
		t.Errorf("Stats = %+v, want one error and nothing in flight", s)
	}
}
