package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The example's scenario, end to end against the embedded state store: the
// standby takes over, the frozen controller's late writes are refused (by
// its runtime, and by the state store's fencing for a stale token), exactly
// one of the racing operators wins, and the watcher sees the set point move.
func TestScenarioEndToEnd(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out, options{thermostat: "kitchen", getenv: func(string) string { return "" }})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.TakeoverHappened {
		t.Error("the standby never took over")
	}
	if !rep.LateWriteRefused {
		t.Error("the frozen controller's write was not refused as lease-lost")
	}
	if !rep.StaleWriteFenced {
		t.Error("the stale fencing token was not rejected by the state store")
	}
	if rep.ConcurrentEditsApplied != 1 {
		t.Errorf("%d racing CompareAndSet calls won, want exactly 1", rep.ConcurrentEditsApplied)
	}
	if rep.SetPointChanges < 1 {
		t.Errorf("the watcher saw %d set-point changes, want at least the winning edit", rep.SetPointChanges)
	}
	for _, want := range []string{"took over the owner lease", "rejected by the state store", "lost the race"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestInvalidThermostatIDIsRefusedBeforeAnyRequest(t *testing.T) {
	_, err := run(context.Background(), &bytes.Buffer{}, options{thermostat: "Kitchen/1", getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "id") {
		t.Fatalf("err = %v, want a parameter error naming id", err)
	}
}
