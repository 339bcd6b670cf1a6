package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/bench"
	"github.com/ssgen/ssgen/server"
)

func runCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRequestsModeCountsAddUp(t *testing.T) {
	mix, err := bench.ParseMix("get=2,set=1,del=1")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(runCtx(t), bench.Config{Clients: 2, InFlight: 3, Mix: mix, Keys: 10, Requests: 50, Warmup: 1, Baseline: true, Segments: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "requests" || rep.Target != "embedded" {
		t.Errorf("mode %q target %q", rep.Mode, rep.Target)
	}
	if rep.Ops != 50 || rep.Errors != 0 {
		t.Fatalf("ops %d errors %d (%s), want 50 and 0", rep.Ops, rep.Errors, rep.FirstError)
	}
	sum := 0
	for _, o := range rep.PerOp {
		sum += o.Count
		if o.Latency.Count != o.Count {
			t.Errorf("%s: %d latencies for %d ops", o.Op, o.Latency.Count, o.Count)
		}
		if l := o.Latency; l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s: percentiles out of order: %+v", o.Op, l)
		}
	}
	if sum != rep.Ops || rep.All.Count != rep.Ops {
		t.Errorf("per-op counts sum to %d, all has %d, ops %d", sum, rep.All.Count, rep.Ops)
	}
	if len(rep.Baselines) != 2 {
		t.Fatalf("%d baselines, want the paho and in-broker echoes", len(rep.Baselines))
	}
	for _, b := range rep.Baselines {
		if b.Ops != 50 || b.Errors != 0 || b.Latency.Count != 50 {
			t.Errorf("baseline %s: ops %d errors %d samples %d (%s)", b.Name, b.Ops, b.Errors, b.Latency.Count, b.FirstError)
		}
		if b.Ratio <= 0 {
			t.Errorf("baseline %s: ratio %v", b.Name, b.Ratio)
		}
	}
}

func TestReportJSONRoundTrips(t *testing.T) {
	rep, err := bench.Run(runCtx(t), bench.Config{Requests: 20})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, buf.String())
	}
	if back.Ops != 20 || len(back.PerOp) == 0 || back.Machine.NumCPU == 0 {
		t.Errorf("decoded report lost fields: %+v", back)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ops/s", "p99", "get", "set"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

func TestWatchModeNotifiesEveryWatcher(t *testing.T) {
	rep, err := bench.Run(runCtx(t), bench.Config{Watchers: 6, WatchClients: 3, Requests: 5, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Watch
	if rep.Mode != "watch" || w == nil {
		t.Fatalf("mode %q, watch %v", rep.Mode, w)
	}
	if w.Rounds != 5 || w.Expected != 30 || w.Notified != 30 || w.Missed != 0 || w.Duplicates != 0 {
		t.Errorf("watch result %+v, want 5 rounds × 6 watchers all notified once", *w)
	}
	if w.Latency.Count != w.Notified {
		t.Errorf("%d latencies for %d notifications", w.Latency.Count, w.Notified)
	}
	if rep.Ops != 5 || rep.PerOp[0].Op != "set" {
		t.Errorf("ops %d per-op %+v", rep.Ops, rep.PerOp)
	}
}

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"get=50,set=50,del=0", "get=50,set=50,del=0", true},
		{"set=1", "get=0,set=1,del=0", true},
		{" GET = 3 , del=1", "get=3,set=0,del=1", true},
		{"get=0", "", false},
		{"get=-1,set=1", "", false},
		{"put=1", "", false},
		{"get", "", false},
		{"get=1,get=2", "", false},
	} {
		m, err := bench.ParseMix(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("ParseMix(%q) error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if err != nil && !errors.Is(err, bench.ErrInvalidConfig) {
			t.Errorf("ParseMix(%q) error %v is not ErrInvalidConfig", tc.in, err)
		}
		if tc.ok && m.String() != tc.want {
			t.Errorf("ParseMix(%q) = %s, want %s", tc.in, m, tc.want)
		}
	}
}

func TestInvalidConfigIsRefused(t *testing.T) {
	for name, cfg := range map[string]bench.Config{
		"negative clients":           {Clients: -1},
		"more clients than watchers": {Watchers: 2, WatchClients: 3},
	} {
		if _, err := bench.Run(context.Background(), cfg); !errors.Is(err, bench.ErrInvalidConfig) {
			t.Errorf("%s: error %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestDurationBoundEndsTheRun(t *testing.T) {
	rep, err := bench.Run(runCtx(t), bench.Config{Duration: 50 * time.Millisecond, Clients: 2, InFlight: 2, Segments: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ops == 0 || rep.Errors != 0 || rep.Requests != 0 || rep.All.Count != rep.Ops {
		t.Errorf("ops %d errors %d count bound %d samples %d", rep.Ops, rep.Errors, rep.Requests, rep.All.Count)
	}
}

func TestBareBaselineRuns(t *testing.T) {
	rep, err := bench.Run(runCtx(t), bench.Config{Keys: 5, Requests: 20, Baseline: true, BareBaseline: true, Segments: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rep.Baselines {
		if b.Ops != 20 || b.Errors != 0 || b.Ratio <= 0 {
			t.Errorf("baseline %s: ops %d errors %d ratio %v (%s)", b.Name, b.Ops, b.Errors, b.Ratio, b.FirstError)
		}
	}
	if goruntime.GOOS == "linux" && rep.CPUPerOp <= 0 {
		t.Errorf("CPU per op %v, want it measured on Linux", rep.CPUPerOp)
	}
}

// Persist runs the load against an embedded server with a data
// directory, its SETs kept, beside the same load against an in-memory
// server; the report counts the data file's transactions, and a given
// directory holds the kept keys afterwards.
func TestPersistComparesWithAnInMemoryServer(t *testing.T) {
	dir := t.TempDir()
	mix, _ := bench.ParseMix("set=3,get=1")
	rep, err := bench.Run(runCtx(t), bench.Config{Persist: true, DataDir: dir, Clients: 2, InFlight: 4, Mix: mix, Keys: 10, Requests: 60, Segments: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Persist || rep.DataDir != dir || rep.Ops != 60 || rep.Errors != 0 {
		t.Fatalf("persist %v dir %q ops %d errors %d (%s)", rep.Persist, rep.DataDir, rep.Ops, rep.Errors, rep.FirstError)
	}
	if len(rep.Baselines) != 1 || rep.Baselines[0].Name != bench.BaselineInMemory || rep.Baselines[0].Ops != 60 || rep.Baselines[0].Ratio <= 0 {
		t.Fatalf("baselines %+v, want the in-memory store", rep.Baselines)
	}
	if c := rep.Commits; c == nil || c.Commits == 0 || c.Writes < int64(rep.PerOp[len(rep.PerOp)-1].Count) || c.Failures != 0 {
		t.Fatalf("commits %+v", rep.Commits)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "aio-persistence=true") || !strings.Contains(text.String(), "writes per transaction") {
		t.Fatalf("text report: %v\n%s", err, text.String())
	}
	srv, err := server.New(server.Options{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if n := srv.Engine().Len(); n != 10 {
		t.Fatalf("%d keys kept in the data dir, want the 10 seeded", n)
	}
}

func TestDataDirNeedsPersistAndAnEmbeddedTarget(t *testing.T) {
	for name, cfg := range map[string]bench.Config{
		"without persist": {DataDir: t.TempDir()},
		"with a broker":   {DataDir: t.TempDir(), Persist: true, Broker: "mqtt://127.0.0.1:1"},
	} {
		if _, err := bench.Run(context.Background(), cfg); !errors.Is(err, bench.ErrInvalidConfig) {
			t.Errorf("%s: error %v, want ErrInvalidConfig", name, err)
		}
	}
}

// TestConsoleComparison: with Console the run alternates no stream, one
// stream open and a server without a console, and reports all three.
func TestConsoleComparison(t *testing.T) {
	rep, err := bench.Run(runCtx(t), bench.Config{Clients: 2, InFlight: 2, Keys: 10, Requests: 300, Segments: 3, Console: true})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Console
	if c == nil || rep.Target != "embedded, console serving" {
		t.Fatalf("target %q console %+v", rep.Target, c)
	}
	if rep.Ops != 300 || c.WithStream.Ops != 300 || c.NoConsole.Ops != 300 || rep.Errors+c.WithStream.Errors+c.NoConsole.Errors != 0 {
		t.Fatalf("ops %d / %d / %d", rep.Ops, c.WithStream.Ops, c.NoConsole.Ops)
	}
	if c.StreamRatio <= 0 || c.HooksRatio <= 0 || len(rep.Baselines) != 0 {
		t.Fatalf("ratios %v %v, baselines %d", c.StreamRatio, c.HooksRatio, len(rep.Baselines))
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil || !strings.Contains(out.String(), "one live stream open") {
		t.Fatalf("text report: %v\n%s", err, out.String())
	}
	if _, err := bench.Run(runCtx(t), bench.Config{Broker: "mqtt://127.0.0.1:1", Console: true}); !errors.Is(err, bench.ErrInvalidConfig) {
		t.Fatalf("Console with a broker: %v", err)
	}
}
