package engine

import (
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// The Transition hook sees the value a SET replaces, only when the key
// exists and the SET would be applied, and its refusal changes nothing.
func TestSetTransitionHookJudgesTheValueReplaced(t *testing.T) {
	h := newHarness(t, Config{})
	var seen []string
	var versions []hlc.HLC
	judge := func(old []byte, version hlc.HLC) Error {
		seen = append(seen, string(old))
		versions = append(versions, version)
		if string(old) == "locked" {
			return "schema violation: D .x: no"
		}
		return ""
	}
	set := func(args ...string) Result {
		req := h.request(step{args: args})
		req.Transition = judge
		return h.eng.Handle(req)
	}
	for _, c := range []struct {
		args    []string
		want    string
		seenNow string // what the hook saw, "-" when not called
	}{
		{[]string{"SET", "k", "a"}, ok, "-"},              // nothing replaced
		{[]string{"SET", "k", "b"}, ok, "a"},              // replaces a
		{[]string{"SET", "k", "c", "NX"}, minusOne, "-"},  // not applied
		{[]string{"SET", "k", "d", "NEX"}, minusOne, "-"}, // not applied
		{[]string{"SET", "k", "locked"}, ok, "b"},         // replaces b
		{[]string{"SET", "k", "e"}, "-ERR schema violation: D .x: no\r\n", "locked"},
		{[]string{"SET", "k", "locked", "NEX"}, "-ERR schema violation: D .x: no\r\n", "locked"}, // NEX over the same value is judged too
	} {
		before := len(seen)
		stored, _ := h.eng.Lookup([]byte("k"))
		res := set(c.args...)
		if string(res.Payload) != c.want {
			t.Fatalf("%q: got %q, want %q", c.args, res.Payload, c.want)
		}
		got := "-"
		if len(seen) > before {
			got = seen[len(seen)-1]
		}
		if got != c.seenNow {
			t.Fatalf("%q: the hook saw %q, want %q", c.args, got, c.seenNow)
		}
		if got != "-" && versions[len(versions)-1] != stored.Version {
			t.Fatalf("%q: the hook saw version %v, want %v (the value replaced)", c.args, versions[len(versions)-1], stored.Version)
		}
	}
	if v, _ := h.eng.Lookup([]byte("k")); string(v.Value) != "locked" {
		t.Fatalf("k holds %q after the refusal", v.Value)
	}
}
