package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliResult is what one in-process run of ssgen printed and returned.
type cliResult struct {
	code           int
	stdout, stderr string
}

// syncBuffer is a bytes.Buffer safe to read while a verb writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runIn runs ssgen with args in-process, with stdin and the given
// environment (nil: empty), bounded by a generous deadline so a hang
// fails the test instead of stalling it.
func runIn(t *testing.T, stdin string, environ map[string]string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	env := &cliEnv{
		stdin:  strings.NewReader(stdin),
		stdout: &stdout,
		stderr: &stderr,
		getenv: func(k string) string { return environ[k] },
	}
	code := runCLI(ctx, env, args)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// withBroker puts --broker url right after the verb, ahead of any "--".
func withBroker(url string, args []string) []string {
	return append([]string{args[0], "--broker", url}, args[1:]...)
}

// run runs a client verb against broker url.
func run(t *testing.T, url string, args ...string) cliResult {
	t.Helper()
	return runIn(t, "", nil, withBroker(url, args)...)
}

// want checks the exit code, and stdout when wantOut is not nil.
func (r cliResult) want(t *testing.T, code int, wantOut *string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d; stdout %q, stderr %q", r.code, code, r.stdout, r.stderr)
	}
	if wantOut != nil && r.stdout != *wantOut {
		t.Fatalf("stdout %q, want %q", r.stdout, *wantOut)
	}
	if code != exitOK && (r.stderr == "" || strings.Count(strings.TrimSuffix(r.stderr, "\n"), "\n") != 0) {
		t.Fatalf("want one error line on stderr, got %q", r.stderr)
	}
}

func ptr(s string) *string { return &s }

func TestParseArgsAllowsFlagsAnywhereAndStopsAtDashDash(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		stopAfter int
		pos, tail []string
		px        string
	}{
		{"flags after positionals", []string{"k", "v", "--px", "10s"}, 0, []string{"k", "v"}, nil, "10s"},
		{"flags between positionals", []string{"k", "--px", "5", "v"}, 0, []string{"k", "v"}, nil, "5"},
		{"dash dash makes the rest positional", []string{"k", "--", "-5"}, 0, []string{"k", "-5"}, nil, ""},
		{"command after the name", []string{"lock1", "--px", "1s", "sh", "-c", "x"}, 1, []string{"lock1"}, []string{"sh", "-c", "x"}, "1s"},
		{"command after dash dash", []string{"lock1", "--", "sh", "--px"}, 1, []string{"lock1"}, []string{"sh", "--px"}, ""},
		{"name after dash dash", []string{"--px", "2s", "--", "lock1", "sh"}, 1, []string{"lock1"}, []string{"sh"}, "2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			px := fs.String("px", "", "")
			pos, tail, help, err := parseArgs(fs, tt.args, tt.stopAfter)
			if err != nil || help {
				t.Fatalf("parseArgs: help %v, err %v", help, err)
			}
			if !reflect.DeepEqual(pos, tt.pos) || !reflect.DeepEqual(tail, tt.tail) || *px != tt.px {
				t.Fatalf("got pos %q tail %q px %q, want %q %q %q", pos, tail, *px, tt.pos, tt.tail, tt.px)
			}
		})
	}
}

func TestVerbsPrintHelpAndSucceed(t *testing.T) {
	for _, v := range []string{"get", "set", "del", "vdel", "watch", "lock"} {
		r := runIn(t, "", nil, v, "--help")
		if r.code != exitOK || !strings.Contains(r.stderr, "usage: ssgen "+v) || !strings.Contains(r.stderr, "  --broker URL") {
			t.Errorf("%s --help: code %d, stderr %q", v, r.code, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("%s --help wrote %q to stdout", v, r.stdout)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	const url = "mqtt://127.0.0.1:1" // never dialled: usage is checked first
	tests := []struct {
		name string
		args []string
	}{
		{"get without key", []string{"get", "--broker", url}},
		{"get with two keys", []string{"get", "a", "b", "--broker", url}},
		{"set without value", []string{"set", "k", "--broker", url}},
		{"set nx and nex", []string{"set", "k", "v", "--nx", "--nex", "--broker", url}},
		{"set bad px", []string{"set", "k", "v", "--px", "soon", "--broker", url}},
		{"set zero px", []string{"set", "k", "v", "--px", "0", "--broker", url}},
		{"set bad hex value", []string{"set", "k", "zz", "--hex", "--broker", url}},
		{"set bad fencing token", []string{"set", "k", "v", "--fencing-token", "nope", "--broker", url}},
		{"set value and file", []string{"set", "k", "v", "--file", "x", "--broker", url}},
		{"set missing file", []string{"set", "k", "--file", "/nonexistent/ssgen", "--broker", url}},
		{"bad key hex", []string{"get", "xyz", "--key-hex", "--broker", url}},
		{"empty key", []string{"get", "", "--broker", url}},
		{"unknown flag", []string{"del", "k", "--bogus", "--broker", url}},
		{"vdel without value", []string{"vdel", "k", "--broker", url}},
		{"watch without keys", []string{"watch", "--broker", url}},
		{"bad broker scheme", []string{"get", "k", "--broker", "http://127.0.0.1:1"}},
		{"lock without command", []string{"lock", "n", "--broker", url}},
		{"lock without ttl", []string{"lock", "n", "--ttl", "0s", "--broker", url, "--", "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runIn(t, "", nil, tt.args...)
			r.want(t, exitUsage, ptr(""))
		})
	}
}

func TestBrokerFromEnvironment(t *testing.T) {
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(testStore(t), "mqtt://"))
	environ := map[string]string{
		"AIO_BROKER_HOSTNAME": host, "AIO_BROKER_TCP_PORT": port, "AIO_MQTT_USE_TLS": "false",
	}
	// runtime.FromEnv reads the process environment.
	for k, v := range environ {
		t.Setenv(k, v)
	}
	runIn(t, "", environ, "set", "envkey", "v1").want(t, exitOK, nil)
	runIn(t, "", environ, "get", "envkey").want(t, exitOK, ptr("v1\n"))
}

// TestShowKeyIsBounded: a message names a key in at most maxShownKey of
// its bytes (quoted or hex), then its length: a 40,000-byte key refused by
// the server is not echoed whole to the terminal.
func TestShowKeyIsBounded(t *testing.T) {
	long := []byte(strings.Repeat("x", 40000))
	for _, tc := range []struct {
		key   []byte
		isHex bool
		want  string
	}{
		{[]byte("a/b"), false, `"a/b"`},
		{[]byte{0xff}, true, "ff"},
		{long, false, strconv.Quote(strings.Repeat("x", maxShownKey)) + "… (40000 bytes)"},
		{long, true, strings.Repeat("78", maxShownKey) + "… (40000 bytes)"},
	} {
		if got := showKey(tc.key, tc.isHex); got != tc.want {
			t.Errorf("showKey(%d bytes, hex %v) = %.80q…", len(tc.key), tc.isHex, got)
		}
	}
}
