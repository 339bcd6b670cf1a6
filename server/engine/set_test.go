package engine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func TestSetConditions(t *testing.T) {
	runTable(t, []tableCase{
		{name: "plain SET stores", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "plain SET overwrites", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k w"), want: ok, wantTS: true},
			{args: args("GET k"), want: bulk("w"), wantTS: true},
		}},
		{name: "empty value is legal", steps: []step{
			{args: []string{"SET", "k", ""}, want: ok, wantTS: true},
			{args: args("GET k"), want: "$0\r\n\r\n", wantTS: true},
		}},
		{name: "binary key and value", steps: []step{
			{args: []string{"SET", "\x00\r\n", "\xff\x00"}, want: ok, wantTS: true},
			{args: []string{"GET", "\x00\r\n"}, want: "$2\r\n\xff\x00\r\n", wantTS: true},
		}},
		{name: "NX on absent key stores", steps: []step{
			{args: args("SET k v NX"), want: ok, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "NX on present key fails with :-1 and a __ts", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k w NX"), want: minusOne, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "NX with the same value still fails", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k v NX"), want: minusOne, wantTS: true},
		}},
		{name: "NEX on absent key stores", steps: []step{
			{args: args("SET k v NEX"), want: ok, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "NEX with the same value renews", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k v NEX"), want: ok, wantTS: true},
		}},
		{name: "NEX with another value fails", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k w NEX"), want: minusOne, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "NEX compares bytes exactly", steps: []step{
			{args: []string{"SET", "k", ""}, want: ok, wantTS: true},
			{args: []string{"SET", "k", "", "NEX"}, want: ok, wantTS: true},
			{args: []string{"SET", "k", "\x00", "NEX"}, want: minusOne, wantTS: true},
		}},
		{name: "options in any order", steps: []step{
			{args: args("SET k v PX 1000 NEX"), want: ok, wantTS: true},
		}},
		{name: "Go SDK NEX PX bytes", steps: []step{
			{args: args("SET k1 v1 NEX PX 10000"), want: ok, wantTS: true},
		}},
	})
}

func TestSetOptionSyntax(t *testing.T) {
	bad := map[string][]string{
		"unknown option":            args("SET k v XX"),
		"lower-case nx":             args("SET k v nx"),
		"lower-case px":             args("SET k v px 10"),
		"NEX takes no argument":     args("SET k v NEX v"),
		"PX without number":         args("SET k v PX"),
		"NX then PX without number": args("SET k v NX PX"),
		"PX zero":                   args("SET k v PX 0"),
		"PX negative":               args("SET k v PX -5"),
		"PX plus sign":              args("SET k v PX +5"),
		"PX fraction":               args("SET k v PX 1.5"),
		"PX hex":                    args("SET k v PX 0x10"),
		"PX letters":                args("SET k v PX ten"),
		"PX empty":                  {"SET", "k", "v", "PX", ""},
		"PX with spaces":            {"SET", "k", "v", "PX", " 5"},
		"PX beyond a Duration":      args("SET k v PX 9223372036855"),
		"PX beyond int64":           args("SET k v PX 99999999999999999999999"),
		"NX and NEX":                args("SET k v NX NEX"),
		"NEX and NX":                args("SET k v NEX NX"),
		"NX twice":                  args("SET k v NX NX"),
		"PX twice":                  args("SET k v PX 1 PX 2"),
		"syntax before timestamps":  args("SET k v BOGUS"),
	}
	for name, a := range bad {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{})
			s := step{args: a, want: errp(ErrSyntax)}
			if name == "syntax before timestamps" {
				s.noTS = true
			}
			h.run(s)
			if h.eng.Len() != 0 {
				t.Fatal("a refused SET stored a key")
			}
		})
	}
	t.Run("largest PX is accepted", func(t *testing.T) {
		newHarness(t, Config{}).run(step{args: args("SET k v PX 9223372036854"), want: ok, wantTS: true})
	})
	t.Run("leading zeros are decimal", func(t *testing.T) {
		h := newHarness(t, Config{})
		h.run(step{args: args("SET k v PX 010"), want: ok, wantTS: true})
		if e, _ := h.eng.Lookup([]byte("k")); e.Deadline != t0.Add(10*time.Millisecond) {
			t.Fatalf("deadline %v, want t0+10ms", e.Deadline)
		}
	})
}

func TestSetTimestampRules(t *testing.T) {
	const node = "Client1"
	runTable(t, []tableCase{
		{name: "SET without __ts", steps: []step{{args: args("SET k v"), noTS: true, want: errp(ErrMissingTimestamp)}}},
		{name: "two parts", steps: []step{{args: args("SET k v"), ts: "1696374425000:0", want: errp(ErrMalformedTimestamp)}}},
		{name: "four parts", steps: []step{{args: args("SET k v"), ts: "1696374425000:0:a:b", want: errp(ErrMalformedTimestamp)}}},
		{name: "signed wall clock", steps: []step{{args: args("SET k v"), ts: "-1:0:n", want: errp(ErrMalformedTimestamp)}}},
		{name: "letters in counter", steps: []step{{args: args("SET k v"), ts: "1:x:n", want: errp(ErrMalformedTimestamp)}}},
		{name: "malformed __ft", steps: []step{{args: args("SET k v"), ft: "nope", want: errp(ErrMalformedTimestamp)}}},
		{name: "padded __ts is fine", steps: []step{{args: args("SET k v"), ts: "001696374425000:00000:" + node, want: ok, wantTS: true}}},
		{name: "__ts exactly at the window's edge is fine", steps: []step{{args: args("SET k v"), ts: tsAt(time.Minute-DriftMargin, 0, node), want: ok, wantTS: true}}},
		{name: "__ts past the window", steps: []step{{args: args("SET k v"), ts: tsAt(time.Minute-DriftMargin+time.Millisecond, 0, node), want: errp(ErrTimestampSkew)}}},
		{name: "__ts one minute ahead", steps: []step{{args: args("SET k v"), ts: tsAt(time.Minute, 0, node), want: errp(ErrTimestampSkew)}}},
		{name: "__ts counter at MaxCounter is fine", steps: []step{{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter), node), want: ok, wantTS: true}}},
		{name: "__ts counter above MaxCounter", steps: []step{{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter)+1, node), want: errp(ErrTimestampSkew)}}},
		{name: "__ts counter 2^64-1 on the engine's millisecond", steps: []step{
			{args: args("SET k v"), ts: tsAt(0, 0, node), want: ok, wantTS: true},
			{args: args("SET k v"), ts: fmt.Sprintf("%d:18446744073709551615:%s", t0.UnixMilli(), node), want: errp(ErrTimestampSkew)},
		}},
		{name: "__ts counter 2^64-1 behind the engine's clock is fine", steps: []step{{args: args("SET k v"), ts: "1:18446744073709551615:" + node, want: ok, wantTS: true}}},
		{name: "__ts echoing a counter above MaxCounter the engine gave is fine", steps: []step{
			{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter), node), want: ok, wantTS: true},
			{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter)+2, node), want: ok, wantTS: true},
			{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter)+3+CounterSlack, node), want: ok, wantTS: true},
			{args: args("SET k v"), ts: fmt.Sprintf("%d:%d:%s", t0.UnixMilli(), uint64(MaxCounter)+5+2*CounterSlack, node), want: errp(ErrTimestampSkew)},
		}},
		{name: "__ts far behind is fine", steps: []step{{args: args("SET k v"), ts: "1:0:" + node, want: ok, wantTS: true}}},
		{name: "__ft exactly at the window's edge is fine", steps: []step{{args: args("SET k v"), ft: tsAt(time.Minute-DriftMargin, 0, "S"), want: ok, wantTS: true}}},
		{name: "__ft past the window", steps: []step{{args: args("SET k v"), ft: tsAt(time.Minute-DriftMargin+time.Millisecond, 0, "S"), want: errp(ErrFencingTokenSkew)}}},
		{name: "__ft counter is not bounded", steps: []step{{args: args("SET k v"), ft: tsAt(0, 0, "S")[:13] + ":18446744073709551615:S", want: ok, wantTS: true}}},
		{name: "malformed __ts before malformed __ft", steps: []step{{args: args("SET k v"), ts: "x", ft: "y", want: errp(ErrMalformedTimestamp)}}},
		{name: "malformed __ft before __ts drift", steps: []step{{args: args("SET k v"), ts: tsAt(time.Hour, 0, node), ft: "y", want: errp(ErrMalformedTimestamp)}}},
		{name: "__ts drift before __ft drift", steps: []step{{args: args("SET k v"), ts: tsAt(time.Hour, 0, node), ft: tsAt(time.Hour, 0, "S"), want: errp(ErrTimestampSkew)}}},
		{name: "MaxDrift is configurable", cfg: Config{MaxDrift: time.Minute + DriftMargin}, steps: []step{
			{args: args("SET k v"), ts: tsAt(time.Minute+time.Millisecond, 0, node), want: errp(ErrTimestampSkew)},
			{args: args("SET k v"), ts: tsAt(time.Minute, 0, node), want: ok, wantTS: true},
		}},
		{name: "a small MaxDrift keeps half of it", cfg: Config{MaxDrift: time.Second}, steps: []step{
			{args: args("SET k v"), ts: tsAt(501*time.Millisecond, 0, node), want: errp(ErrTimestampSkew)},
			{args: args("SET k v"), ts: tsAt(500*time.Millisecond, 0, node), want: ok, wantTS: true},
		}},
	})
}

func TestSetMalformedEmptyTimestamp(t *testing.T) {
	h := newHarness(t, Config{})
	req := h.request(step{args: args("SET k v")})
	req.Timestamp = ""
	if got := string(h.eng.Handle(req).Payload); got != errp(ErrMalformedTimestamp) {
		t.Fatalf("empty __ts: %q", got)
	}
}

func TestSetVersionIsTheArticleExample(t *testing.T) {
	h := newHarness(t, Config{})
	res := h.run(step{args: args("SET keyName value"), ts: "1696374425000:0:Client1", want: ok, wantTS: true})
	if want := mustParse(t, "1696374425000:1:StateStore"); res.Version != want {
		t.Fatalf("version %v, want %v", res.Version, want)
	}
	get := h.run(step{args: args("GET keyName"), noTS: true, want: bulk("value"), wantTS: true})
	if get.Version != res.Version {
		t.Fatalf("GET version %v, SET returned %v", get.Version, res.Version)
	}
}

func TestSetVersionIsAboveTheRequestTimestamp(t *testing.T) {
	for _, tc := range []struct {
		name, ts, want string
	}{
		{"request ahead of the engine", tsAt(30*time.Second, 5, "C"), tsAt(30*time.Second, 6, "StateStore")},
		{"request behind the engine", "1:9:C", tsAt(0, 0, "StateStore")},
		{"same millisecond, higher counter", tsAt(0, 41, "C"), tsAt(0, 42, "StateStore")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			res := h.run(step{args: args("SET k v"), ts: tc.ts, want: ok, wantTS: true})
			if want := mustParse(t, tc.want); res.Version != want {
				t.Fatalf("version %v, want %v", res.Version, want)
			}
			if res.Version.Compare(mustParse(t, tc.ts)) <= 0 {
				t.Fatalf("version %v not above request %v", res.Version, tc.ts)
			}
		})
	}
}

func TestSetVersionsStrictlyIncreaseWithinOneMillisecond(t *testing.T) {
	h := newHarness(t, Config{NodeID: "node-7"})
	var last Result
	for i := range 5 {
		res := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
		if res.Version.Node != "node-7" {
			t.Fatalf("node id %q", res.Version.Node)
		}
		if i > 0 && res.Version.Compare(last.Version) <= 0 {
			t.Fatalf("version %v after %v", res.Version, last.Version)
		}
		last = res
	}
}

func TestSetConditionFailureTicksButKeepsTheKeysVersion(t *testing.T) {
	h := newHarness(t, Config{})
	set := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	fail := h.run(step{args: args("SET k w NX"), want: minusOne, wantTS: true})
	if fail.Version.Compare(set.Version) <= 0 {
		t.Fatalf(":-1 version %v not after %v", fail.Version, set.Version)
	}
	if e, _ := h.eng.Lookup([]byte("k")); e.Version != set.Version {
		t.Fatalf("key version %v, want the SET's %v", e.Version, set.Version)
	}
}

// Requests cannot bring the counter near overflow (see hlc.MaxCounter),
// but a version seeded with Put can; the clock then moves to the next
// millisecond rather than fail or go back.
func TestSetCounterOverflowIsEscaped(t *testing.T) {
	h := newHarness(t, Config{})
	top := hlc.HLC{Wall: uint64(t0.UnixMilli()), Counter: math.MaxUint64 - 1, Node: "C"}
	if err := h.eng.Put([]byte("seed"), []byte("v"), PutOptions{Version: top}); err != nil {
		t.Fatal(err)
	}
	res := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	if res.Version.Compare(top) <= 0 || res.Version.Wall != top.Wall+1 {
		t.Fatalf("version %v, want the millisecond after %v", res.Version, top)
	}
	next := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	if next.Version.Compare(res.Version) <= 0 {
		t.Fatalf("clock went back: %v after %v", next.Version, res.Version)
	}
}

func TestSetCopiesItsArguments(t *testing.T) {
	h := newHarness(t, Config{})
	req := h.request(step{args: args("SET key value")})
	h.eng.Handle(req)
	copy(req.Args[1], "XXX")
	copy(req.Args[2], "YYYYY")
	e, found := h.eng.Lookup([]byte("key"))
	if !found || string(e.Value) != "value" {
		t.Fatalf("stored %q, %v after the request buffer changed", e.Value, found)
	}
}

func TestSetWithoutPXMakesTheKeyPersistent(t *testing.T) {
	h := newHarness(t, Config{})
	h.runAll([]step{
		{args: args("SET k v PX 100"), want: ok, wantTS: true},
		{args: args("SET k w"), want: ok, wantTS: true},
	})
	h.clock.Advance(time.Hour)
	if _, ok := h.eng.Expire(); ok {
		t.Fatal("a deadline remains")
	}
	h.run(step{args: args("GET k"), want: bulk("w"), wantTS: true})
}

func TestNodeIDWithColonStillGivesParsableVersions(t *testing.T) {
	h := newHarness(t, Config{NodeID: "a:b"})
	res := h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	if _, err := hlc.Parse(res.Version.String()); err != nil || res.Version.Node != "a_b" {
		t.Fatalf("version %v: %v", res.Version, err)
	}
}
