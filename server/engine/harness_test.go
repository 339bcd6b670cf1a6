package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// t0 is the article's example instant, 2023-10-03 23:07:05 UTC.
var t0 = time.UnixMilli(1696374425000)

// harness runs an engine on a fake clock and records its notifications.
type harness struct {
	t     *testing.T
	clock *FakeClock
	eng   *Engine
	notes []Notification
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, clock: NewFakeClock(t0)}
	cfg.Now = h.clock.Now
	cfg.OnNotify = func(n Notification) { h.notes = append(h.notes, n) }
	h.eng = New(cfg)
	return h
}

// step is one request and the exact answer it must get.
type step struct {
	client string   // "Client1" when empty
	args   []string // verb first
	ts     string   // raw __ts; empty: the client's clock reading "now:0:client"
	noTS   bool     // send no __ts at all
	ft     string   // raw __ft; empty: none
	want   string   // exact payload
	wantTS bool     // the response carries a __ts
}

func (h *harness) request(s step) Request {
	client := s.client
	if client == "" {
		client = "Client1"
	}
	args := make([][]byte, len(s.args))
	for i, a := range s.args {
		args[i] = []byte(a)
	}
	req := Request{Args: args, Client: client}
	if !s.noTS {
		req.HasTimestamp = true
		req.Timestamp = s.ts
		if s.ts == "" {
			req.Timestamp = fmt.Sprintf("%d:0:%s", h.clock.Now().UnixMilli(), client)
		}
	}
	if s.ft != "" {
		req.HasFencingToken, req.FencingToken = true, s.ft
	}
	return req
}

// run executes s and checks its payload and whether it carries a __ts.
func (h *harness) run(s step) Result {
	h.t.Helper()
	res := h.eng.Handle(h.request(s))
	if got := string(res.Payload); got != s.want {
		h.t.Fatalf("%q: payload %q, want %q", strings.Join(s.args, " "), got, s.want)
	}
	if got := !res.Version.IsZero(); got != s.wantTS {
		h.t.Fatalf("%q: carries __ts = %v (%v), want %v", strings.Join(s.args, " "), got, res.Version, s.wantTS)
	}
	if _, err := resp3.ParseResponse(res.Payload); err != nil {
		h.t.Fatalf("%q: payload %q does not parse: %v", strings.Join(s.args, " "), res.Payload, err)
	}
	return res
}

func (h *harness) runAll(steps []step) {
	h.t.Helper()
	for _, s := range steps {
		h.run(s)
	}
}

// do is run for steps whose exact answer a test does not pin.
func (h *harness) do(s step) Result {
	h.t.Helper()
	return h.eng.Handle(h.request(s))
}

func (h *harness) takeNotes() []Notification {
	n := h.notes
	h.notes = nil
	return n
}

func args(s string) []string { return strings.Fields(s) }

func errp(e Error) string { return "-ERR " + string(e) + "\r\n" }

const (
	ok       = "+OK\r\n"
	one      = ":1\r\n"
	zero     = ":0\r\n"
	minusOne = ":-1\r\n"
	null     = "$-1\r\n"
)

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

func mustParse(t *testing.T, s string) hlc.HLC {
	t.Helper()
	v, err := hlc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tsAt is a client __ts at t0+d.
func tsAt(d time.Duration, counter int, node string) string {
	return fmt.Sprintf("%d:%d:%s", t0.Add(d).UnixMilli(), counter, node)
}

type tableCase struct {
	name  string
	cfg   Config
	steps []step
}

func runTable(t *testing.T, cases []tableCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newHarness(t, tc.cfg).runAll(tc.steps)
		})
	}
}
