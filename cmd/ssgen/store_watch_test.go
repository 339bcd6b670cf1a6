package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// startWatch runs `ssgen watch args...` until the returned stop is called,
// which cancels it and returns its result.
func startWatch(t *testing.T, url string, args ...string) (out *syncBuffer, stop func() cliResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- runCLI(ctx, env, append(append([]string{"watch"}, args...), "--broker", url)) }()
	stopped := false
	stop = func() cliResult {
		cancel()
		code := <-done
		stopped = true
		return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return &stdout, stop
}

// until repeats act until out shows want, for at most a bounded time.
// The watch registers asynchronously, so the first changes may go unseen.
func until(t *testing.T, out *syncBuffer, want string, act func()) {
	t.Helper()
	waitFor(t, fmt.Sprintf("watch output to show %q", want), func() bool {
		if strings.Contains(out.String(), want) {
			return true
		}
		act()
		return false
	})
}

func TestWatchPrintsSetAndDeleteUntilCancelled(t *testing.T) {
	url := testStore(t)
	out, stop := startWatch(t, url, "w1", "w 2")
	until(t, out, "SET w1 v1 ", func() { run(t, url, "set", "w1", "v1").want(t, exitOK, nil) })
	until(t, out, `SET "w 2" "two words" `, func() { run(t, url, "set", "w 2", "two words").want(t, exitOK, nil) })
	run(t, url, "del", "w1").want(t, exitOK, nil)
	until(t, out, "DELETE w1 ", func() {})
	r := stop()
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("watch ended with %d, stderr %q", r.code, r.stderr)
	}
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		f := strings.Fields(line)
		if _, err := hlc.Parse(f[len(f)-1]); err != nil || (f[0] != "SET" && f[0] != "DELETE") {
			t.Errorf("line %q: not an event with a version last (%v)", line, err)
		}
	}
}

func TestWatchHexOutput(t *testing.T) {
	url := testStore(t)
	out, stop := startWatch(t, url, "6b", "--key-hex", "--hex")
	until(t, out, "SET 6b 00ff ", func() { run(t, url, "set", "k", "00ff", "--hex").want(t, exitOK, nil) })
	if r := stop(); r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestEventFormat(t *testing.T) {
	v := hlc.HLC{Wall: 1, Counter: 2, Node: "n"}
	vs := v.String()
	tests := []struct {
		name string
		f    eventFormat
		ev   runtime.Event
		want string
	}{
		{"plain set", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("a/b"), Value: []byte("21.5"), Version: v}, "SET a/b 21.5 " + vs},
		{"empty value is quoted", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("k"), Value: nil, Version: v}, `SET k "" ` + vs},
		{"spaces and newlines are quoted", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("k"), Value: []byte("a b\n"), Version: v}, `SET k "a b\n" ` + vs},
		{"quotes are quoted", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("k"), Value: []byte(`"x"`), Version: v}, `SET k "\"x\"" ` + vs},
		{"binary is quoted", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("k"), Value: []byte{0xff, 0}, Version: v}, `SET k "\xff\x00" ` + vs},
		{"unicode stays plain", eventFormat{}, runtime.Event{Kind: runtime.EventSet, Key: []byte("küche"), Value: []byte("21°C"), Version: v}, "SET küche 21°C " + vs},
		{"hex", eventFormat{valueHex: true, keyHex: true}, runtime.Event{Kind: runtime.EventSet, Key: []byte("k"), Value: []byte{0xff}, Version: v}, "SET 6b ff " + vs},
		{"delete", eventFormat{}, runtime.Event{Kind: runtime.EventDelete, Key: []byte("k"), Version: v}, "DELETE k " + vs},
		{"resync found", eventFormat{}, runtime.Event{Kind: runtime.EventResync, Key: []byte("k"), Value: []byte("x"), Version: v, Found: true}, "RESYNC k x " + vs},
		{"resync absent", eventFormat{}, runtime.Event{Kind: runtime.EventResync, Key: []byte("k")}, "RESYNC k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := tt.f.format(tt.ev); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWatchCurrentPrintsEachKeysStateFirst(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) {
			url := st.url(t)
			run(t, url, "set", "w1", "v1").want(t, exitOK, nil)
			out, stop := startWatch(t, url, "--current", "w1", "absent")
			// No write is needed: each key's state comes first, then its changes.
			until(t, out, "RESYNC absent\n", func() {})
			until(t, out, "RESYNC w1 v1 ", func() {})
			until(t, out, "SET absent now ", func() { run(t, url, "set", "absent", "now").want(t, exitOK, nil) })
			r := stop()
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("watch ended with %d, stderr %q", r.code, r.stderr)
			}
			first := map[string]string{}
			for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
				f := strings.Fields(l)
				if _, ok := first[f[1]]; !ok {
					first[f[1]] = f[0]
				}
			}
			if first["w1"] != "RESYNC" || first["absent"] != "RESYNC" {
				t.Fatalf("first lines per key %v, want RESYNC for both; output %q", first, r.stdout)
			}
		})
	}
}
