package logclip

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghijk", 10, "abcdefghij…(11 bytes)"},
		{"abcdefghé", 9, "abcdefgh…(10 bytes)"},
		{"€€€€", 7, "€€…(12 bytes)"},
	} {
		if got := Clip(tc.s, tc.max); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// TestEveryValueIsCut: strings, errors, Stringers, bytes, groups, values
// given to With, the message: nothing longer than the bound reaches the
// handler, and short records pass unchanged.
func TestEveryValueIsCut(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(New(slog.NewJSONHandler(&buf, nil), 100))
	long := strings.Repeat("é", 5000)
	log.With("with", long).WithGroup("g").Warn(long, "s", long, "err", errors.New(long), "b", []byte(long),
		slog.Group("grp", "inner", long), "n", 42)
	line := buf.String()
	if len(line) > 1500 || !utf8.ValidString(line) || strings.Count(line, "…(10000 bytes)") != 6 || !strings.Contains(line, `"n":42`) {
		t.Fatalf("%d bytes: %s", len(line), line)
	}
	buf.Reset()
	log.Info("short", "k", "v")
	if !strings.Contains(buf.String(), `"msg":"short","k":"v"`) {
		t.Fatalf("short record: %s", buf.String())
	}
}
