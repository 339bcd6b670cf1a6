package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server/servertest"
)

// The example's scenario, end to end: the standby takes over, the frozen
// controller's late writes are refused (by its runtime, and by the state
// store's fencing for a stale token), exactly one of the racing operators
// wins, and the watcher sees the set point move.
func TestScenarioEndToEnd(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out, options{thermostat: "kitchen", getenv: func(string) string { return "" }})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, out.String())
}

// The scenario run twice against one live state store, on the embedded
// server and on mosquitto: the second run starts from what the first left
// (the set point, the heater's fencing token) and still has exactly one
// winner of the operators' race.
func TestScenarioRunsTwiceAgainstOneStore(t *testing.T) {
	backends := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"embedded", func(t *testing.T) string { return servertest.New(t).URL() }},
		{"mosquitto", func(t *testing.T) string {
			url := brokertest.Mosquitto(t)
			servertest.NewExternal(t, url)
			return url
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url := b.url(t)
			for i := range 2 {
				var out bytes.Buffer
				rep, err := run(context.Background(), &out, options{broker: url, thermostat: "kitchen", getenv: func(string) string { return "" }})
				t.Logf("run %d:\n%s", i+1, out.String())
				if err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
				checkReport(t, rep, out.String())
			}
		})
	}
}

func checkReport(t *testing.T, rep report, out string) {
	t.Helper()
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
		t.Errorf("%d racing SetIfVersion calls won, want exactly 1", rep.ConcurrentEditsApplied)
	}
	if rep.SetPointChanges < 1 {
		t.Errorf("the watcher saw %d set-point changes, want at least the winning edit", rep.SetPointChanges)
	}
	for _, want := range []string{"took over the owner lease", "rejected by the state store", "lost the race"} {
		if !strings.Contains(out, want) {
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
