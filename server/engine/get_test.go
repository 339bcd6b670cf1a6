package engine

import (
	"testing"
	"time"
)

func TestGet(t *testing.T) {
	runTable(t, []tableCase{
		{name: "miss answers $-1 without __ts", steps: []step{{args: args("GET k"), want: null}}},
		{name: "miss without request __ts", steps: []step{{args: args("GET k"), noTS: true, want: null}}},
		{name: "hit answers the value with its version", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("GET k"), noTS: true, want: bulk("v"), wantTS: true},
		}},
		{name: "GET needs no fencing token", steps: []step{
			{args: args("SET k v"), ft: tsAt(0, 0, "L"), want: ok, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "GET ignores a malformed __ft", steps: []step{
			{args: args("GET k"), ft: "junk", want: null},
		}},
		{name: "GET refuses a malformed __ts", steps: []step{
			{args: args("GET k"), ts: "junk", want: errp(ErrMalformedTimestamp)},
		}},
		{name: "GET refuses a __ts from the future", steps: []step{
			{args: args("GET k"), ts: tsAt(time.Hour, 0, "C"), want: errp(ErrRequestTimestampDrift)},
		}},
	})
}

func TestGetReturnsTheSetVersionEvenAfterTheClockMoved(t *testing.T) {
	h := newHarness(t, Config{})
	set := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	h.clock.Advance(time.Minute)
	h.run(step{args: args("SET other v"), want: ok, wantTS: true})
	get := h.run(step{args: args("GET k"), want: bulk("v"), wantTS: true})
	if get.Version != set.Version {
		t.Fatalf("GET version %v, SET returned %v", get.Version, set.Version)
	}
}

func TestGetMergesTheRequestTimestamp(t *testing.T) {
	h := newHarness(t, Config{})
	ts := tsAt(30*time.Second, 3, "C")
	h.run(step{args: args("GET k"), ts: ts, want: null})
	set := h.run(step{args: args("SET k v"), ts: tsAt(0, 0, "C"), want: ok, wantTS: true})
	if set.Version.Compare(mustParse(t, ts)) <= 0 {
		t.Fatalf("version %v does not follow the __ts %v a GET carried", set.Version, ts)
	}
}
