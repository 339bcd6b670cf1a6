package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// slack is how long past its timeout a call may take to return before it
// counts as hung: scheduling on a loaded 2-core CI machine with -race,
// never a measure of speed.
const slack = 3 * time.Second

// config points a client at addr (host:port, usually a proxy) with short
// timeouts and reconnect delays, logging into t.
func config(t testing.TB, addr, id string) runtime.Config {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return runtime.Config{
		Host:         host,
		Port:         p,
		ClientID:     id,
		Timeout:      2 * time.Second,
		KeepAlive:    5 * time.Second,
		ReconnectMin: 20 * time.Millisecond,
		ReconnectMax: 200 * time.Millisecond,
		Logger:       slog.New(slog.NewTextHandler(servertest.LogWriter(t), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
}

// dial connects and closes the client when the test ends.
func dial(t testing.TB, cfg runtime.Config) *runtime.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial %s: %v", cfg.ClientID, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// restartable is an embedded state store that can be closed and replaced
// by a fresh one on the same port, as a crashed and restarted service
// would be (the new one starts empty: the embedded store keeps nothing).
type restartable struct {
	t     testing.TB
	log   io.Writer // made before the first server, so it outlives the last
	addr  string
	mu    sync.Mutex
	srv   *server.Server
	epoch int
}

// waitBound is how long waitFor waits: generous, as faults and a loaded
// machine slow everything down; no test asserts how long anything took.
const waitBound = 20 * time.Second

// waitFor polls cond until it holds, failing the test after waitBound. It
// is this package's one way to wait for a condition or to retry an action
// until it succeeds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, waitBound, what, cond)
}

func startRestartable(t testing.TB) *restartable {
	t.Helper()
	r := &restartable{t: t, log: servertest.LogWriter(t)}
	r.srv = r.start("127.0.0.1:0")
	r.addr = r.srv.Addr()
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		_ = r.srv.Close()
	})
	return r
}

func (r *restartable) start(listen string) *server.Server {
	r.t.Helper()
	// The port was just released; a client's reconnect can race the bind.
	var s *server.Server
	logged := false
	waitFor(r.t, "a server to start on "+listen, func() bool {
		var err error
		s, err = server.New(server.Options{
			Listen: listen,
			Logger: slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			r.t.Fatalf("server on %s: %v", listen, err)
		}
		if err = s.Start(); err != nil && !logged {
			r.t.Logf("start on %s: %v (retrying)", listen, err)
			logged = true
		}
		return err == nil
	})
	return s
}

// current returns the serving server and its epoch.
func (r *restartable) current() (*server.Server, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv, r.epoch
}

// restart closes the server and starts a new one on the same address.
func (r *restartable) restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.srv.Close()
	r.srv = r.start(r.addr)
	r.epoch++
}

// tally counts call outcomes of a load run.
type tally struct {
	mu       sync.Mutex
	ok, errs int
	byKind   map[string]int
	slowest  time.Duration
	hung     []string
}

func (s *tally) add(err error, took, limit time.Duration, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKind == nil {
		s.byKind = make(map[string]int)
	}
	switch {
	case err == nil:
		s.ok++
	case errors.Is(err, runtime.ErrNotFound): // an answer, not a failure
		s.ok++
		s.byKind[errKind(err)]++
	default:
		s.errs++
		s.byKind[errKind(err)]++
	}
	s.slowest = max(s.slowest, took)
	if took > limit {
		s.hung = append(s.hung, fmt.Sprintf("%s took %v (limit %v): %v", what, took, limit, err))
	}
}

func (s *tally) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d calls: %d answered, %d failed (by kind, with not-found answers: %v), slowest %v", s.ok+s.errs, s.ok, s.errs, s.byKind, s.slowest.Round(time.Millisecond))
}

func errKind(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, runtime.ErrConnectionLost):
		return "connection lost"
	case errors.Is(err, runtime.ErrTimeout):
		return "timeout"
	case errors.Is(err, runtime.ErrNotFound):
		return "not found"
	case errors.Is(err, runtime.ErrClosed):
		return "closed"
	}
	return "other: " + err.Error()
}
