//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// grandchildScripts start a grandchild of ssgen that writes its pid to
// $PIDFILE and would outlive the shell CMD is: a command the shell waits
// for (the issue's `sleep; echo after`), one that ignores SIGTERM (so only
// the SIGKILL after --grace ends it), and a background job the shell does
// not wait for.
var grandchildScripts = []struct{ name, script string }{
	{"foreground", `sh -c 'echo $$ > "$PIDFILE"; exec sleep 30'; echo after`},
	{"ignores-sigterm", `sh -c 'trap "" TERM; echo $$ > "$PIDFILE"; exec sleep 30'; echo after`},
	{"background", `sh -c 'echo $$ > "$PIDFILE"; exec sleep 30' & wait`},
}

// startLock runs `ssgen lock` in-process until ctx ends; the result
// arrives on the returned channel.
func startLock(ctx context.Context, t *testing.T, url string, pidfile string, args ...string) (*syncBuffer, *syncBuffer, <-chan int) {
	t.Helper()
	t.Setenv("PIDFILE", pidfile)
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- runCLI(ctx, env, append([]string{"lock", "--broker", url}, args...)) }()
	return &stdout, &stderr, done
}

// grandchildPid waits for the grandchild to write its pid.
func grandchildPid(t *testing.T, pidfile string) int {
	t.Helper()
	var pid int
	waitFor(t, "the grandchild to write its pid to "+pidfile, func() bool {
		b, err := os.ReadFile(pidfile)
		p, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		pid = p
		return err == nil && perr == nil && pid > 0
	})
	return pid
}

// running reports whether pid is a live process (a zombie is not: it has
// ended and waits only for its parent to collect it).
func running(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// gone fails the test unless pid ends soon (signals are delivered
// asynchronously, so ssgen may return a moment before the kernel is done).
func gone(t *testing.T, pid int) {
	t.Helper()
	t.Cleanup(func() {
		if running(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // a survivor is not left behind
		}
	})
	waitFor(t, fmt.Sprintf("grandchild %d to end (it survived ssgen lock)", pid), func() bool { return !running(pid) })
}

func TestLockLostStopsTheWholeProcessGroup(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) {
			url := st.url(t)
			for _, gc := range grandchildScripts {
				t.Run(gc.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					pidfile := filepath.Join(t.TempDir(), "pid")
					_, stderr, done := startLock(ctx, t, url, pidfile, "lk", "--ttl", "300ms", "--grace", "100ms", "--", "sh", "-c", gc.script)
					pid := grandchildPid(t, pidfile)
					run(t, url, "set", "lk", "intruder").want(t, exitOK, nil)
					if code := <-done; code != exitNegative {
						t.Fatalf("exit %d, want %d; stderr %q", code, exitNegative, stderr.String())
					}
					gone(t, pid)
					run(t, url, "del", "lk").want(t, exitOK, nil)
				})
			}
		})
	}
}

func TestLockInterruptStopsTheWholeProcessGroup(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) {
			url := st.url(t)
			for _, gc := range grandchildScripts {
				t.Run(gc.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					ictx, interrupt := context.WithCancel(ctx)
					defer interrupt()
					pidfile := filepath.Join(t.TempDir(), "pid")
					_, stderr, done := startLock(ictx, t, url, pidfile, "lk", "--grace", "300ms", "--", "sh", "-c", gc.script)
					pid := grandchildPid(t, pidfile)
					interrupt()
					if code := <-done; code != 128+int(syscall.SIGTERM) {
						t.Fatalf("exit %d, want %d (SIGTERM); stderr %q", code, 128+int(syscall.SIGTERM), stderr.String())
					}
					gone(t, pid)
					// Released only once everything stopped.
					run(t, url, "get", "lk").want(t, exitNegative, nil)
				})
			}
		})
	}
}

// What CMD leaves running when it exits by itself is stopped before the
// lock is released, and CMD's exit code stands.
func TestLockStopsWhatTheCommandLeftRunning(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) {
			url := st.url(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			pidfile := filepath.Join(t.TempDir(), "pid")
			script := `sh -c 'trap "" TERM; echo $$ > "$PIDFILE"; exec sleep 30' >/dev/null 2>&1 </dev/null &
				until [ -s "$PIDFILE" ]; do sleep 0.01; done; exit 3`
			_, stderr, done := startLock(ctx, t, url, pidfile, "lk", "--grace", "300ms", "--", "sh", "-c", script)
			if code := <-done; code != 3 {
				t.Fatalf("exit %d, want 3; stderr %q", code, stderr.String())
			}
			gone(t, grandchildPid(t, pidfile))
			if !strings.Contains(stderr.String(), "left running") {
				t.Fatalf("stderr %q does not say what was stopped", stderr.String())
			}
			run(t, url, "get", "lk").want(t, exitNegative, nil)
		})
	}
}
