// Package servertest starts state store servers for tests, the way
// httptest starts HTTP servers: on a free loopback port, closed when the
// test ends.
package servertest

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// Option adjusts the server.Options a helper starts with.
type Option func(*server.Options)

// WithOptions overrides fields of server.Options; Listen and Broker are
// set by the helper afterwards.
func WithOptions(f func(*server.Options)) Option { return Option(f) }

// WithClock runs the server's engine on c: advance it and call
// Engine().Expire() instead of sleeping.
func WithClock(c *engine.FakeClock) Option {
	return func(o *server.Options) { o.Now = c.Now }
}

// WithManualClock runs the server on c (server.Options.Clock), a clock
// that moves only when told: s.AdvanceClock(30*time.Second) expires what
// fell due at once, and versions follow it. Make c with
// server.NewManualClock(time.Now()).
func WithManualClock(c *server.ManualClock) Option {
	return func(o *server.Options) { o.Clock = c }
}

// WithChaos starts the server with chaos rules (server.Options.Chaos):
// requests that match one get its effect. s.SetChaos changes them while
// the test runs.
func WithChaos(rules ...server.ChaosRule) Option {
	return func(o *server.Options) { o.Chaos = rules }
}

// WithFaultInjection turns on the fault vocabulary of Microsoft's SDK
// tests (server.Options.FaultInjection): a client's fault:* user
// properties refuse or disconnect it. Embedded servers only.
func WithFaultInjection() Option {
	return func(o *server.Options) { o.FaultInjection = true }
}

// New starts an embedded state store on 127.0.0.1:0 and closes it with
// t.Cleanup. Its log goes to t.Log unless an option sets a Logger.
func New(t testing.TB, opts ...Option) *server.Server {
	t.Helper()
	return start(t, "", opts)
}

// NewExternal starts a state store attached to the broker at brokerURL
// (mqtt://host:port) and closes it with t.Cleanup.
func NewExternal(t testing.TB, brokerURL string, opts ...Option) *server.Server {
	t.Helper()
	return start(t, brokerURL, opts)
}

func start(t testing.TB, broker string, opts []Option) *server.Server {
	t.Helper()
	var o server.Options
	for _, f := range opts {
		f(&o)
	}
	if broker == "" {
		o.Listen, o.Broker = "127.0.0.1:0", ""
	} else {
		o.Broker = broker
	}
	if o.Logger == nil {
		// Made before the server's cleanup is registered, so its own
		// cleanup runs after it: goroutines of the broker that outlive
		// Close log into the void.
		o.Logger = slog.New(slog.NewTextHandler(LogWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := server.New(o)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("servertest: close: %v", err)
		}
	})
	return s
}

// LogWriter returns a writer of log lines to t.Log, so that they show
// only for failing tests. Lines written once t's cleanups have reached the
// ones registered before this call are discarded: t.Log would panic, and
// the race detector flags a goroutine that logs while the test ends. Make
// it before starting what logs to it, so that what is stopped in a later
// cleanup can still log while it stops.
func LogWriter(t testing.TB) io.Writer {
	w := &tWriter{t: t}
	t.Cleanup(w.stop)
	return w
}

// tWriter is LogWriter's writer.
type tWriter struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (w *tWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *tWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}
