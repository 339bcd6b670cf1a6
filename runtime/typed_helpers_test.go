package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// typedBackend is a state store for the typed-layer tests: the embedded
// server, or the external server attached to mosquitto.
type typedBackend struct {
	name  string
	start func(t *testing.T, opts ...servertest.Option) *typedEnv
}

// typedEnv is a running backend and what a test needs to reach it.
type typedEnv struct {
	url      string
	srv      *server.Server
	embedded bool
}

var typedBackends = []typedBackend{
	{"embedded", func(t *testing.T, opts ...servertest.Option) *typedEnv {
		srv := servertest.New(t, opts...)
		return &typedEnv{url: srv.URL(), srv: srv, embedded: true}
	}},
	{"mosquitto", func(t *testing.T, opts ...servertest.Option) *typedEnv {
		url := brokertest.Mosquitto(t)
		return &typedEnv{url: url, srv: servertest.NewExternal(t, url, opts...)}
	}},
}

func forEachTypedBackend(t *testing.T, f func(t *testing.T, env *typedEnv)) {
	for _, b := range typedBackends {
		t.Run(b.name, func(t *testing.T) { f(t, b.start(t)) })
	}
}

// typedDial connects a client with test-friendly timings and closes it when
// the test ends.
func typedDial(t testing.TB, url string) *runtime.Client {
	t.Helper()
	return coreDial(t, coreConfig(t, url))
}

// typedCtx bounds a whole test.
func typedCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds, failing the test after a generous
// bound; it never asserts how long anything took.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// receive waits for a value from ch, with the same generous bound.
func receive[V any](t *testing.T, what string, ch <-chan V) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
	}
	panic("unreachable")
}
