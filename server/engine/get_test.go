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
			{args: args("GET k"), ts: tsAt(time.Hour, 0, "C"), want: errp(ErrTimestampSkew)},
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

func TestGetMergesTheRequestTimestampUpToThePhysicalClock(t *testing.T) {
	h := newHarness(t, Config{})
	ts := tsAt(0, 41, "C") // merged: the clock reads t0:42
	h.run(step{args: args("GET k"), ts: ts, want: null})
	set := h.run(step{args: args("SET k v"), ts: tsAt(0, 0, "C"), want: ok, wantTS: true})
	if want := mustParse(t, tsAt(0, 43, "StateStore")); set.Version != want {
		t.Fatalf("version %v, want %v after a GET carried %v", set.Version, want, ts)
	}
}

// A read's __ts ahead of the physical clock is checked but not merged: a
// client that may only read cannot move the clock versions come from.
func TestReadsDoNotMoveTheClockAhead(t *testing.T) {
	for _, verb := range []string{"GET k", "KEYNOTIFY k", "SCAN *"} {
		t.Run(verb, func(t *testing.T) {
			h := newHarness(t, Config{})
			h.do(step{args: args(verb), ts: tsAt(30*time.Second, 3, "C")})
			set := h.run(step{args: args("SET k v"), ts: tsAt(0, 0, "C"), want: ok, wantTS: true})
			if want := mustParse(t, tsAt(0, 1, "StateStore")); set.Version != want {
				t.Fatalf("version %v, want %v: the read moved the clock", set.Version, want)
			}
		})
	}
}
