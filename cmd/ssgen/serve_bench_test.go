package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func runBenchVerb(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runCLI(ctx, env, append([]string{"bench"}, args...))
	return code, out.String(), errb.String()
}

func TestBenchJSONReportAddsUp(t *testing.T) {
	code, out, errs := runBenchVerb(t, "--requests", "50", "--clients", "2", "--in-flight", "2",
		"--mix", "get=1,set=1,del=1", "--keys", "5", "--warmup", "1", "--baseline", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	var rep struct {
		Mode   string `json:"mode"`
		Ops    int    `json:"ops"`
		Errors int    `json:"errors"`
		PerOp  []struct {
			Op    string `json:"op"`
			Count int    `json:"count"`
		} `json:"per_op"`
		All struct {
			Count int   `json:"count"`
			P99   int64 `json:"p99_ns"`
		} `json:"all"`
		Baselines []struct {
			Name  string  `json:"name"`
			Ops   int     `json:"ops"`
			Ratio float64 `json:"ratio"`
		} `json:"baselines"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	sum := 0
	for _, o := range rep.PerOp {
		sum += o.Count
	}
	if rep.Mode != "requests" || rep.Ops != 50 || rep.Errors != 0 || sum != 50 || rep.All.Count != 50 {
		t.Errorf("report does not add up: %+v", rep)
	}
	if len(rep.Baselines) != 2 || rep.Baselines[0].Ops != 50 || rep.Baselines[0].Ratio <= 0 {
		t.Errorf("baselines %+v", rep.Baselines)
	}
}

func TestBenchWatchModePrintsNotifyRow(t *testing.T) {
	code, out, errs := runBenchVerb(t, "--watchers", "4", "--watch-clients", "2", "--requests", "3")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	for _, want := range []string{"notify", "12 of 12 notifications"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchRefusesBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--mix", "get=0"},
		{"--mix", "put=1"},
		{"--clients", "-1"},
		{"--watchers", "1", "--watch-clients", "2"},
		{"--timeout", "0s"},
		{"--data-dir", "/tmp"},
		{"extra"},
	} {
		if code, _, _ := runBenchVerb(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestBenchPersistPrintsTheInMemoryRatio(t *testing.T) {
	code, out, errs := runBenchVerb(t, "--persist", "--requests", "40", "--clients", "2", "--in-flight", "2", "--mix", "set=1", "--keys", "5")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	for _, want := range []string{"aio-persistence=true", "baseline in-memory-store", "ssgen / in-memory-store:", "writes per transaction"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchUnreachableBrokerIsAnError(t *testing.T) {
	code, _, errs := runBenchVerb(t, "--broker", "mqtt://"+refusedAddr(t), "--requests", "1", "--timeout", "1s")
	if code != exitUsage || !strings.Contains(errs, "ssgen bench:") || strings.Contains(errs, "bench: bench:") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
