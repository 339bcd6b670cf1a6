package interop

import (
	"context"
	"testing"
	"time"
)

// shortTTL is the expiry used by expiry tests; passTTL moves the server's
// fake clock past it.
const shortTTL = 300 * time.Millisecond

// expectAbsent fails the test unless a GET of key misses.
func expectAbsent(ctx context.Context, t *testing.T, c *ssClient, key string) {
	t.Helper()
	got, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	if !got.Version.IsZero() || got.Value != "" {
		t.Fatalf("Get %q = {%q %v}, want absent", key, got.Value, got.Version)
	}
}
