package console

import "testing"

// Issue #25 (F5): client text reaches the page with its hidden characters
// as visible escapes (console.js's shown does the same in the browser).
func TestShownEscapesHiddenCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"thermostat-app", "thermostat-app"},
		{"evil\u202Enimda", `evil\u202Enimda`},
		{"a\u2066b\u2069c", `a\u2066b\u2069c`},
		{"\uFEFFbom\u200F", `\uFEFFbom\u200F`},
		{"nul\x00del\x7f", `nul\u0000del\u007F`},
		{"tab\tand שלום", "tab\tand שלום"},
	} {
		if got := shown(tc.in); got != tc.want {
			t.Errorf("shown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
