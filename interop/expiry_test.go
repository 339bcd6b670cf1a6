package interop

import (
	"testing"

	"github.com/Azure/iot-operations-sdks/go/services/statestore"
)

func TestExpiredKeyReadsAbsent(t *testing.T) {
	srv := startServer(t)
	c := dial(t, srv, "c")
	ctx := bounded(t)

	if res, err := c.Set(ctx, "ttl", "v", statestore.WithExpiry(shortTTL)); err != nil || !res.Value {
		t.Fatalf("Set with expiry = %v, %v", res, err)
	}
	if got, err := c.Get(ctx, "ttl"); err != nil || got.Value != "v" {
		t.Fatalf("Get before expiry = %v, %v", got, err)
	}
	passTTL(srv)
	expectAbsent(ctx, t, c, "ttl")
}

// Expiry is also found by the request that meets it, without the expiry
// loop having run.
func TestRequestAfterDeadlineFindsKeyExpired(t *testing.T) {
	srv := startServer(t)
	c := dial(t, srv, "c")
	ctx := bounded(t)

	if _, err := c.Set(ctx, "ttl", "v", statestore.WithExpiry(shortTTL)); err != nil {
		t.Fatalf("Set with expiry: %v", err)
	}
	srv.clock.Advance(shortTTL)
	expectAbsent(ctx, t, c, "ttl")
}

// A SET without PX makes a key persistent again, as in Redis; NEX with PX
// (a lock renewal) moves the deadline.
func TestLaterSetReplacesExpiry(t *testing.T) {
	srv := startServer(t)
	c := dial(t, srv, "c")
	ctx := bounded(t)

	if _, err := c.Set(ctx, "kept", "v1", statestore.WithExpiry(shortTTL)); err != nil {
		t.Fatalf("Set with expiry: %v", err)
	}
	if _, err := c.Set(ctx, "kept", "v2"); err != nil {
		t.Fatalf("Set without expiry: %v", err)
	}
	if _, err := c.Set(ctx, "renewed", "r", statestore.WithExpiry(shortTTL)); err != nil {
		t.Fatalf("Set renewed: %v", err)
	}
	if res, err := c.Set(ctx, "renewed", "r", statestore.NotExistsOrEqual, statestore.WithExpiry(3*shortTTL)); err != nil || !res.Value {
		t.Fatalf("NEX renewal = %v, %v", res, err)
	}
	passTTL(srv)
	for key, want := range map[string]string{"kept": "v2", "renewed": "r"} {
		got, err := c.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get %q: %v", key, err)
		}
		if got.Value != want || got.Version.IsZero() {
			t.Fatalf("%q = {%q %v}, want %q still present", key, got.Value, got.Version, want)
		}
	}
	passTTL(srv)
	passTTL(srv)
	expectAbsent(ctx, t, c, "renewed")
}
