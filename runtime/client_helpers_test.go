package runtime_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// coreEmbedded starts an embedded state store.
func coreEmbedded(t testing.TB, opts ...servertest.Option) *server.Server {
	t.Helper()
	return servertest.New(t, opts...)
}

// coreConfig points a client at srv with test-friendly timings.
func coreConfig(t testing.TB, url string) runtime.Config {
	t.Helper()
	cfg, err := runtime.FromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	cfg.ReconnectMin = 20 * time.Millisecond
	cfg.ReconnectMax = 200 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(servertest.LogWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
	return cfg
}

// coreDial connects a client and closes it when the test ends.
func coreDial(t testing.TB, cfg runtime.Config) *runtime.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func coreCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
