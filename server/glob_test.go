package server

import "testing"

func TestGlobMatchesRedisStylePatternsAcrossSlashes(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "a/b/c", true},
		{"sensors/*", "sensors/a/b", true},
		{"sensors/*", "sensor", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"[ab]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a]x", "bx", true},
		{"[^a]x", "ax", false},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{"[ab", "[ab", true},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b", "xxaxxbxxa", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
