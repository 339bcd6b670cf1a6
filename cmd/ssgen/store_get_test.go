package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func TestGetPrintsValueAndVersion(t *testing.T) {
	url := testStore(t)
	set := run(t, url, "set", "greeting", "hello world")
	set.want(t, exitOK, nil)
	ver := strings.TrimSuffix(set.stdout, "\n")
	if _, err := hlc.Parse(ver); err != nil {
		t.Fatalf("set printed %q, not a version: %v", set.stdout, err)
	}

	run(t, url, "get", "greeting").want(t, exitOK, ptr("hello world\n"))
	run(t, url, "get", "greeting", "--version").want(t, exitOK, ptr("hello world\n"+ver+"\n"))
	run(t, url, "get", "greeting", "--hex").want(t, exitOK, ptr("68656c6c6f20776f726c64\n"))
	run(t, url, "get", "6772656574696e67", "--key-hex").want(t, exitOK, ptr("hello world\n"))
}

func TestGetMissingKeyExitsOne(t *testing.T) {
	url := testStore(t)
	r := run(t, url, "get", "nothing-here")
	r.want(t, exitNegative, ptr(""))
	if !strings.Contains(r.stderr, "not found") {
		t.Fatalf("stderr %q does not say not found", r.stderr)
	}
}

func TestGetOutWritesExactBytes(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "bin", "00ff0a0d", "--hex").want(t, exitOK, nil)
	path := filepath.Join(t.TempDir(), "value")
	run(t, url, "get", "bin", "--out", path, "--version").want(t, exitOK, nil)
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "\x00\xff\n\r" {
		t.Fatalf("file holds %q (%v), want the 4 bytes", got, err)
	}
	run(t, url, "get", "bin", "--out", "-").want(t, exitOK, ptr("\x00\xff\n\r"))
}
