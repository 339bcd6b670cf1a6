package interop

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/mqtt"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// closeTimeout bounds each teardown step, so that a hang there fails the
// test instead of stalling the suite.
const closeTimeout = 10 * time.Second

// testServer is one embedded state store on 127.0.0.1 port 0 whose engine
// runs on a fake clock, so keys expire when a test says so. It owns the SDK
// clients dialled to it, to tear everything down in a safe order.
type testServer struct {
	addr  string
	clock *engine.FakeClock
	eng   *engine.Engine

	mu       sync.Mutex
	clients  []*ssClient
	sessions []*mqtt.SessionClient
}

// startServer starts a server torn down when the test ends. It uses
// server.New rather than servertest.New to control the teardown order:
//
//  1. the SDK state store clients close (they unsubscribe, which needs
//     the connection);
//  2. the server closes while the SDK sessions are still connected;
//  3. the SDK sessions stop.
//
// The reverse order (sessions first) makes each SDK client send DISCONNECT
// with Session Expiry 0, so mochi deletes its session in the connection's
// goroutine; when that meets mochi's Close, which read-locks the client map
// twice in Clients.GetByListener, the broker deadlocks (mochi v2.7.9).
func startServer(t *testing.T) *testServer { return startServerWith(t, nil) }

// startServerWith is startServer with options changed by with.
func startServerWith(t *testing.T, with func(*server.Options)) *testServer {
	t.Helper()
	clock := engine.NewFakeClock(time.Now())
	logs := &testLog{t: t}
	opts := server.Options{
		Listen: "127.0.0.1:0",
		Now:    clock.Now,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if with != nil {
		with(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("server Start: %v", err)
	}
	ts := &testServer{addr: srv.Addr(), clock: clock, eng: srv.Engine()}
	t.Cleanup(func() {
		ts.mu.Lock()
		clients, sessions := ts.clients, ts.sessions
		ts.mu.Unlock()
		within(t, "closing the SDK state store clients", func() {
			for _, c := range clients {
				c.Close()
			}
		})
		within(t, "closing the server", func() {
			if err := srv.Close(); err != nil {
				t.Errorf("server Close: %v", err)
			}
		})
		logs.stop()
		for _, s := range sessions {
			_ = s.Stop()
		}
	})
	return ts
}

// within runs step, failing the test if it has not returned after
// closeTimeout (the step is then abandoned, still running).
func within(t *testing.T, what string, step func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		step()
	}()
	select {
	case <-done:
	case <-time.After(closeTimeout):
		t.Errorf("%s did not finish within %v", what, closeTimeout)
	}
}

func (s *testServer) own(c *ssClient, session *mqtt.SessionClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c != nil {
		s.clients = append(s.clients, c)
	}
	if session != nil {
		s.sessions = append(s.sessions, session)
	}
}

// passTTL moves the server's clock past shortTTL and lets the engine expire
// what is due, as its expiry loop would with a real clock: no request is
// involved, so DELETE notifications come from expiry alone.
func passTTL(srv *testServer) {
	srv.clock.Advance(shortTTL + time.Millisecond)
	srv.eng.Expire()
}

// testLog sends server log lines to the test log until stop. Broker
// goroutines may still log after the server closed and the test ended,
// when t.Log panics and reading the test's state races with testing
// itself; the mutex and flag keep those lines away from t.
type testLog struct {
	mu      sync.Mutex
	t       *testing.T
	stopped bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Logf("server: %s", p)
	}
	return len(p), nil
}

func (l *testLog) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}
