// Package clienttest dials runtime clients for tests against a server on
// loopback, each closed by t.Cleanup, and gives tests a bounded context.
package clienttest

import (
	"context"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

// Dial connects a runtime client to the state store at url (a server's
// URL()), with a 5 s request timeout; the client is closed when the test
// ends.
func Dial(t testing.TB, url string) *runtime.Client {
	t.Helper()
	cfg, err := runtime.FromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Context is a context that ends after 30 s or with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
