package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/persist"
)

// serveDir runs `ssgen serve --data-dir dir` (with extra flags) until the
// returned stop is called, and returns its URL and its log. stop fails the
// test when serve exits with an error.
func serveDir(t *testing.T, dir string, extra ...string) (url string, logs *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	logs = &syncBuffer{}
	env := &cliEnv{stdin: strings.NewReader(""), stdout: outW, stderr: logs, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, env, append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn"}, extra...))
		outW.Close()
	}()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case url = <-line:
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("serve printed no URL; stderr %.2000s", logs)
	}
	if !strings.HasPrefix(url, "mqtt://") {
		cancel()
		t.Fatalf("serve printed %q, exit %d; stderr %.2000s", url, <-done, logs)
	}
	return url, logs, func() {
		t.Helper()
		cancel()
		if code := <-done; code != exitOK {
			t.Fatalf("serve exited %d; stderr %.2000s", code, logs)
		}
	}
}

// The reported attack: `ssgen set --persist` of a 40,000-byte key was
// answered OK, then no checkpoint and no start of the data directory went
// through again, --repair included. It is now refused with the quota
// error; the same key unkept, and a kept key of 32,768 bytes, are stored,
// and the directory restarts.
func TestServePersistRefusesAKeyTooLongForTheDataFile(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 40000)
	longest := strings.Repeat("y", persist.MaxKeyBytes)
	url, _, stop := serveDir(t, dir)
	r := run(t, url, "set", long, "v", "--raw", "--persist")
	if r.code != exitUsage || !strings.Contains(r.stderr, protocol.ErrQuotaExceeded) {
		t.Fatalf("kept SET of a 40,000-byte key: exit %d, stderr %.300q…", r.code, r.stderr)
	}
	run(t, url, "set", long, "memory only", "--raw").want(t, exitOK, nil)
	run(t, url, "set", longest, "kept", "--raw", "--persist").want(t, exitOK, nil)
	stop()

	url, _, stop = serveDir(t, dir)
	defer stop()
	run(t, url, "get", longest).want(t, exitOK, ptr("kept\n"))
	run(t, url, "get", long).want(t, exitNegative, ptr(""))
}
