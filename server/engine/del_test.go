package engine

import (
	"testing"
	"time"
)

func TestDel(t *testing.T) {
	runTable(t, []tableCase{
		{name: "deleting a present key answers :1", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("DEL k"), want: one, wantTS: true},
			{args: args("GET k"), want: null},
		}},
		{name: "deleting an absent key answers :0", steps: []step{
			{args: args("DEL k"), want: zero, wantTS: true},
		}},
		{name: "DEL needs no __ts", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("DEL k"), noTS: true, want: one, wantTS: true},
		}},
		{name: "DEL refuses a malformed __ts", steps: []step{
			{args: args("DEL k"), ts: "1:2", want: errp(ErrMalformedTimestamp)},
		}},
		{name: "DEL refuses a malformed __ft", steps: []step{
			{args: args("DEL k"), ft: "1:2", want: errp(ErrMalformedTimestamp)},
		}},
		{name: "DEL refuses a __ts from the future", steps: []step{
			{args: args("DEL k"), ts: tsAt(time.Hour, 0, "C"), want: errp(ErrTimestampSkew)},
		}},
		{name: "DEL refuses a __ft from the future", steps: []step{
			{args: args("DEL k"), ft: tsAt(time.Hour, 0, "C"), want: errp(ErrFencingTokenSkew)},
		}},
		{name: "a deleted key can be created with NX", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("DEL k"), want: one, wantTS: true},
			{args: args("SET k w NX"), want: ok, wantTS: true},
		}},
	})
}

func TestDelVersionIsAFreshTickAboveTheRequest(t *testing.T) {
	h := newHarness(t, Config{})
	set := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	ts := tsAt(10*time.Second, 0, "C")
	del := h.run(step{args: args("DEL k"), ts: ts, want: one, wantTS: true})
	if del.Version.Compare(set.Version) <= 0 || del.Version.Compare(mustParse(t, ts)) <= 0 {
		t.Fatalf("DEL version %v not above SET %v and request %v", del.Version, set.Version, ts)
	}
	miss := h.run(step{args: args("DEL k"), noTS: true, want: zero, wantTS: true})
	if miss.Version.Compare(del.Version) <= 0 {
		t.Fatalf("second DEL version %v not above %v", miss.Version, del.Version)
	}
}
