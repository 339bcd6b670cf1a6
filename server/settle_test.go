package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// Drain stops an attached server taking requests (the broker then says
// nobody subscribes) once what it held is answered; what it answered
// before is still there for the next server.
func TestDrainStopsTakingRequests(t *testing.T) {
	b := brokertest.Start(t)
	dir := t.TempDir()
	srv := servertest.NewExternal(t, b.URL(), servertest.WithOptions(func(o *server.Options) { o.DataDir = dir }))
	cfg, err := runtime.FromURL(b.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 20 * time.Second
	cfg.NoServiceWait = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !srv.Drain(ctx) {
		t.Fatal("Drain did not settle")
	}
	if _, _, err := c.Get(ctx, []byte("k")); !errors.Is(err, runtime.ErrNoService) {
		t.Fatalf("GET after Drain: %v, want ErrNoService (nobody subscribed)", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
