package runtime_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// The runtime's tests run against real state stores on loopback. This file
// is their one harness: the backends, a client with test timings, a
// context bounding a test, and the one way to wait for something.

// backend is a state store a client can talk to: the embedded server, or
// the external-mode server attached to mosquitto.
type backend struct {
	name  string
	start func(t testing.TB, opts ...servertest.Option) *testEnv
}

// testEnv is a running backend and what a test needs to reach it.
type testEnv struct {
	url      string
	srv      *server.Server
	embedded bool
}

// backends are every backend; backends[0] is the embedded one, for tests
// that need only one.
var backends = []backend{
	{"embedded", func(t testing.TB, opts ...servertest.Option) *testEnv {
		srv := servertest.New(t, opts...)
		return &testEnv{url: srv.URL(), srv: srv, embedded: true}
	}},
	{"mosquitto", func(t testing.TB, opts ...servertest.Option) *testEnv {
		url := brokertest.Mosquitto(t)
		return &testEnv{url: url, srv: servertest.NewExternal(t, url, opts...)}
	}},
}

// forEachBackend runs f once per backend as a subtest; f starts it, with
// the server options it needs.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// forEachEnv runs f once per backend as a subtest, on a backend started
// with default options.
func forEachEnv(t *testing.T, f func(t *testing.T, env *testEnv)) {
	forEachBackend(t, func(t *testing.T, b backend) { f(t, b.start(t)) })
}

// testConfig points a client at url with test-friendly timings, logging
// into the test's log.
func testConfig(t testing.TB, url string) runtime.Config {
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

// dialConfig connects a client and closes it when the test ends.
func dialConfig(t testing.TB, cfg runtime.Config) *runtime.Client {
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

// dial connects a client to url with testConfig.
func dial(t testing.TB, url string) *runtime.Client {
	t.Helper()
	return dialConfig(t, testConfig(t, url))
}

// testCtx bounds a whole test.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitBound is how long waitFor and receive wait before failing: generous,
// since a loaded machine is slow; no test asserts how long anything took.
const waitBound = 10 * time.Second

// waitFor polls cond until it holds, failing the test after waitBound.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, waitBound, what, cond)
}

// receive waits for a value from ch, failing the test after waitBound.
func receive[V any](t testing.TB, what string, ch <-chan V) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitBound):
		t.Fatalf("gave up waiting for %s", what)
	}
	panic("unreachable")
}
