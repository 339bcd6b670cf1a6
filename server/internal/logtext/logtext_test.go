package logtext

import (
	"strings"
	"testing"
)

func TestLogBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"a/b", 200, "a/b"},
		{"two words", 200, "two words"},
		{"\x00\xff", 200, "base64:AP8="},
		{"", 200, ""},
		{"abcdef", 3, "abc…(6 bytes)"},
		{"aé", 2, "a…(3 bytes)"}, // not cut inside a character
		{strings.Repeat("\xff", 10), 4, "base64://///w==…(10 bytes)"},
		{"\xe2\x82\xac\xe2\x82\xac", 1, "…(6 bytes)"},
		{"ab", 0, "…(2 bytes)"},
	} {
		if got := Bytes([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if Clip("", 10) != "(none)" {
		t.Error(`Clip("") is not "(none)"`)
	}
}
