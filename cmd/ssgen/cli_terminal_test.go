//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsTerminalOnlyForATTY: /dev/null is a character device, not a
// terminal, so `ssgen migrate apply </dev/null` (cron, CI) must not ask,
// and `serve >/dev/null` must not count as a terminal for the console's
// token; a pipe, a file and a non-file are not terminals either; a pty is.
func TestIsTerminalOnlyForATTY(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	_, pty := openPty(t)
	for _, tc := range []struct {
		name string
		f    any
		want bool
	}{
		{"/dev/null", devnull, false},
		{"pipe", r, false},
		{"file", file, false},
		{"strings.Reader", strings.NewReader(""), false},
		{"pty", pty, true},
	} {
		if got := isTerminal(tc.f); got != tc.want {
			t.Errorf("isTerminal(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
