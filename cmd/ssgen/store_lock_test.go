package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func TestLockRunsCommandWithTokenAndReleases(t *testing.T) {
	url := testStore(t)
	r := run(t, url, "lock", "lk", "--ttl", "10s", "--", "sh", "-c", `echo "$SSGEN_FENCING_TOKEN"; echo "$SSGEN_LOCK_HOLDER"`)
	r.want(t, exitOK, nil)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout %q: want token and holder lines", r.stdout)
	}
	token, holder := lines[0], lines[1]
	if _, err := hlc.Parse(token); err != nil {
		t.Fatalf("SSGEN_FENCING_TOKEN %q: %v", token, err)
	}
	if holder == "" {
		t.Fatal("SSGEN_LOCK_HOLDER is empty")
	}
	// Released: the lock key is gone, and the token still fences writes.
	run(t, url, "get", "lk").want(t, exitNegative, nil)
	run(t, url, "set", "guarded", "v", "--fencing-token", token).want(t, exitOK, nil)
	run(t, url, "set", "guarded", "w").want(t, exitNegative, nil)
}

func TestLockExitsWithCommandCode(t *testing.T) {
	url := testStore(t)
	// The command speaks for itself: ssgen adds nothing to stderr.
	if r := run(t, url, "lock", "lk", "sh", "-c", "exit 3"); r.code != 3 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("got %+v, want exit 3 and no output", r)
	}
	run(t, url, "get", "lk").want(t, exitNegative, nil)
	r := run(t, url, "lock", "lk", "--", "/nonexistent/ssgen-cmd")
	r.want(t, exitUsage, ptr(""))
	run(t, url, "get", "lk").want(t, exitNegative, nil)
}

func TestLockWaitsForHolder(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "lk", "someone-else").want(t, exitOK, nil)
	r := run(t, url, "lock", "lk", "--wait", "100ms", "--", "echo", "ran")
	r.want(t, exitNegative, ptr(""))

	done := make(chan cliResult, 1)
	go func() { done <- run(t, url, "lock", "lk", "--ttl", "5s", "--", "echo", "ran") }()
	// Whether the waiter tried before or after this, the delete frees it.
	run(t, url, "del", "lk").want(t, exitOK, nil)
	(<-done).want(t, exitOK, ptr("ran\n"))
}

func TestLockLostStopsCommand(t *testing.T) {
	url := testStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, env, []string{"lock", "lk", "--ttl", "300ms", "--grace", "100ms", "--broker", url,
			"--", "sh", "-c", "echo started; exec sleep 30"})
	}()
	until(t, &stdout, "started", func() {})
	// Another holder takes the key: the next renewal finds it in the way.
	run(t, url, "set", "lk", "intruder").want(t, exitOK, nil)
	if code := <-done; code != exitNegative {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitNegative, stderr.String())
	}
	if !strings.Contains(stderr.String(), "lost") {
		t.Fatalf("stderr %q does not say the lease was lost", stderr.String())
	}
	// The intruder's value stays: release only deletes our own hold.
	run(t, url, "get", "lk").want(t, exitOK, ptr("intruder\n"))
}

func TestLockInterruptStopsCommandAndReleases(t *testing.T) {
	url := testStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	ictx, interrupt := context.WithCancel(ctx)
	go func() {
		done <- runCLI(ictx, env, []string{"lock", "lk", "--broker", url, "--", "sh", "-c", "echo started; exec sleep 30"})
	}()
	until(t, &stdout, "started", func() {})
	interrupt()
	if code := <-done; code != 128+15 {
		t.Fatalf("exit %d, want 143 (SIGTERM); stderr %q", code, stderr.String())
	}
	run(t, url, "get", "lk").want(t, exitNegative, nil)
}
