package server_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server"
)

// lockedBuffer is a log destination that the service writes to from its
// own goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// External mode publishes responses without waiting for their PUBACK, so
// a broker refusing one must still show in the service's log.
func TestExternalModeLogsARefusedResponse(t *testing.T) {
	// Everyone may use the request topic, but only a client itself may
	// publish under clients/<its id>/: the service's answers are refused
	// (mosquitto: PUBACK 0x87).
	b := brokertest.StartWithACL(t, "topic readwrite statestore/#\npattern readwrite clients/%c/#\n")
	var logs lockedBuffer
	e := newEnv(t, b.URL(), []func(*server.Options){func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}})
	c := e.connect("refused")
	c.send(request{payload: cmd("GET", "k")})
	waitFor(t, "the refusal to be logged", func() bool {
		return strings.Contains(logs.String(), "broker refused a response or notification")
	})
	if !strings.Contains(logs.String(), "reason_code=0x87") {
		t.Errorf("log lacks the reason code:\n%s", logs.String())
	}
	select {
	case p := <-c.resp:
		t.Errorf("a refused response arrived: %q", p.Payload)
	default:
	}
}

// A broker that holds small packets back (mosquitto without
// set_tcp_nodelay) slows every request; the service times its own round
// trips through the broker and warns once. The threshold decides, so the
// test asserts no timing: 1 ns is exceeded by any round trip, an hour by
// none.
func TestExternalModeWarnsOnceOfASlowBroker(t *testing.T) {
	for _, tc := range []struct {
		name      string
		threshold time.Duration
		warn      bool
	}{{"over", time.Nanosecond, true}, {"under", time.Hour, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b := brokertest.StartNagle(t)
			var logs lockedBuffer
			newEnv(t, b.URL(), []func(*server.Options){func(o *server.Options) {
				o.SlowBroker = tc.threshold
				o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}})
			waitFor(t, "the round trip to be measured", func() bool {
				return strings.Contains(logs.String(), "broker round trip measured")
			})
			got := strings.Count(logs.String(), "set_tcp_nodelay true")
			if want := map[bool]int{true: 1, false: 0}[tc.warn]; got != want {
				t.Fatalf("%d warnings, want %d:\n%s", got, want, logs.String())
			}
			if strings.Contains(logs.String(), "broker refused") {
				t.Fatalf("a probe's PUBACK was reported as a refused response:\n%s", logs.String())
			}
		})
	}
}
