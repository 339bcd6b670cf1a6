package engine

import (
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/ssgen/ssgen/runtime/resp3"
)

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"", "", true},
		{"", "a", false},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"a*", "a", true},
		{"a*", "ab/c", true},
		{"a*", "ba", false},
		{"*c", "abc", true},
		{"a*c*e", "abcde", true},
		{"a*c*e", "abcdf", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"[abc]x", "bx", true},
		{"[abc]x", "dx", false},
		{"[^abc]x", "dx", true},
		{"[^abc]x", "ax", false},
		{"[a-c]", "b", true},
		{"[c-a]", "b", true},
		{"[a-c]", "d", false},
		{`[\]]`, "]", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\`, `a\`, true},
		{"[abc", "[abc", true},
		{"[abc", "a", false},
		{"thermostats/*/setPoint", "thermostats/kitchen/setPoint", true},
		{"thermostats/*/setPoint", "thermostats/kitchen/reading", false},
		{"*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	} {
		if got := globMatch([]byte(tc.pattern), tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestScan(t *testing.T) {
	runTable(t, []tableCase{
		{name: "empty store is one empty last page", steps: []step{
			{args: args("SCAN *"), want: "*1\r\n*0\r\n", wantTS: true},
		}},
		{name: "matching keys in byte order", steps: []step{
			{args: args("SET b/2 v"), want: ok, wantTS: true},
			{args: args("SET a/1 v"), want: ok, wantTS: true},
			{args: args("SET c v"), want: ok, wantTS: true},
			{args: args("SCAN */*"), want: "*1\r\n*2\r\n" + bulk("a/1") + bulk("b/2"), wantTS: true},
		}},
		{name: "token that is not hex", steps: []step{
			{args: args("SCAN * zz"), want: errp(ErrSyntax)},
		}},
		{name: "empty token", steps: []step{
			{args: []string{"SCAN", "*", ""}, want: errp(ErrSyntax)},
		}},
		{name: "token past every key", steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: []string{"SCAN", "*", hex.EncodeToString([]byte("z"))}, want: "*1\r\n*0\r\n", wantTS: true},
		}},
	})
}

func TestScanPagesThroughEveryKeyOnce(t *testing.T) {
	h := newHarness(t, Config{})
	var want []string
	for i := range 2*scanPage + 7 {
		k := fmt.Sprintf("k%04d", i)
		want = append(want, k)
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	h.eng.Put([]byte("other"), nil, PutOptions{})
	var got []string
	a := args("SCAN k*")
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		res := h.do(step{args: a})
		v, err := resp3.ParseResponse(res.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 || len(v.Elems) > 2 {
			t.Fatalf("page %q: %v", res.Payload, err)
		}
		for _, k := range v.Elems[0].Elems {
			got = append(got, string(k.Str))
		}
		if len(v.Elems) == 1 {
			break
		}
		a = []string{"SCAN", "k*", string(v.Elems[1].Str)}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("SCAN listed %d keys, want %d", len(got), len(want))
	}
}
