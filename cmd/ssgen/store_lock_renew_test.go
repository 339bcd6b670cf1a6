package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestLockRenewsWhileTheCommandRuns is the journey, run as a user
// runs it, with the built binary: a command that runs for more than twice
// --ttl ends well, and the service saw the lease renewed in between.
// (Before, the lease renewed on a context that ended as soon as the lock
// was taken, and the command was stopped after one TTL.)
func TestLockRenewsWhileTheCommandRuns(t *testing.T) {
	const key = "test/job"
	var sets atomic.Int64 // successful SETs of the lock key: the acquisition and each renewal
	srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		o.OnRequest = func(ev *server.RequestEvent) {
			if ev.Verb == "SET" && string(ev.Key) == key && string(ev.Payload) == "+OK\r\n" {
				sets.Add(1)
			}
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// 2.5 s is more than twice the TTL: the lease survives only if renewed.
	cmd := exec.CommandContext(ctx, builtSSGen(ctx, t), "lock", key, "--ttl", "1s", "--broker", srv.URL(), "--", "sh", "-c", "sleep 2.5; echo done")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "done\n" {
		t.Fatalf("ssgen lock: %v, stdout %q, stderr %q; want exit 0 and the command's output", err, stdout.String(), stderr.String())
	}
	// A lease that lived 2.5 s on a 1 s TTL was renewed at least twice
	// after it was taken. The service counts a SET after handing its answer
	// to the broker, so the last one may be counted a little after the
	// lock saw it: wait for the count rather than read it once.
	waitFor(t, "the acquisition and at least 2 renewals of "+key, func() bool { return sets.Load() >= 3 })
	run(t, srv.URL(), "get", key).want(t, exitNegative, nil) // released
}

// builtSSGen builds the ssgen binary into a directory removed when the
// test ends, for a test that runs it as a user does.
func builtSSGen(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ssgen")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestLockStopsTheCommandBeforeTheLeaseCanExpire cuts ssgen lock off from
// the service (every byte swallowed, nothing closed, as in a network
// partition): renewals fail, and the command, which ignores SIGTERM, must
// be killed before the lease's deadline, not after it, since from then on
// the service may give the lock to someone else. ssgen says so: the lease
// was not renewed in time (had it been reported lost, the stop would have
// started only at the deadline).
func TestLockStopsTheCommandBeforeTheLeaseCanExpire(t *testing.T) {
	srv := servertest.New(t)
	proxy := faultproxy.Start(t, srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, env, []string{"lock", "lk", "--ttl", "2s", "--grace", "200ms", "--timeout", "500ms", "--broker", proxy.Addr(),
			"--", "sh", "-c", `trap "" TERM; echo started; exec sleep 30`})
	}()
	until(t, &stdout, "started", func() {})
	proxy.Blackhole()
	if code := <-done; code != exitNegative {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitNegative, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not renewed in time") {
		t.Fatalf("stderr %q does not say the lease was not renewed in time", stderr.String())
	}
}

// TestLockCutOffSaysWhyFirstAndDoesNotWaitOutTimeout: with the service
// unreachable, the release after a late stop waits only while the lease is
// still ours, not the whole --timeout (a minute here, past the test's
// bound), and the one error line starts with why CMD was stopped.
func TestLockCutOffSaysWhyFirstAndDoesNotWaitOutTimeout(t *testing.T) {
	srv := servertest.New(t)
	proxy := faultproxy.Start(t, srv.Addr())
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(context.Background(), env, []string{"lock", "lk", "--ttl", "2s", "--grace", "200ms", "--timeout", "1m", "--broker", proxy.Addr(),
			"--", "sh", "-c", `echo started; exec sleep 30`})
	}()
	until(t, &stdout, "started", func() {})
	proxy.Blackhole()
	var code int
	waitFor(t, "ssgen lock to exit before its --timeout", func() bool {
		select {
		case code = <-done:
			return true
		default:
			return false
		}
	})
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if code != exitNegative || len(lines) != 1 || !strings.HasPrefix(lines[0], `ssgen lock: "lk": the lease was not renewed in time`) {
		t.Fatalf("exit %d, stderr %q: want exit 1 and one line saying first that the lease was not renewed in time", code, stderr.String())
	}
}

// TestLockLateErrorSaysWhenTheLeaseHadAlreadyExpired: a holder paused past
// its TTL (SIGSTOP) finds its deadline gone when it runs again; it must not
// claim CMD was stopped before the lock could pass on.
func TestLockLateErrorSaysWhenTheLeaseHadAlreadyExpired(t *testing.T) {
	late := lateError(`"lk"`, 300*time.Millisecond, 3*time.Second, "sh").Error()
	if !strings.Contains(late, "not renewed in time (300ms of its --ttl 3s left)") || !strings.Contains(late, "before the lock could pass") {
		t.Errorf("late stop: %q", late)
	}
	expired := lateError(`"lk"`, -4500*time.Millisecond, 3*time.Second, "sh").Error()
	if strings.Contains(expired, "before the lock could pass") || !strings.Contains(expired, "expired 4.5s ago") || !strings.Contains(expired, "another holder may have taken the lock") {
		t.Errorf("expired lease: %q", expired)
	}
}

// TestLockNamesTheNegativeFlag: a negative --grace is refused naming
// --grace alone (not "--wait and --grace"), and the same for --wait.
func TestLockNamesTheNegativeFlag(t *testing.T) {
	const url = "mqtt://127.0.0.1:1" // never dialled: usage is checked first
	for flag, other := range map[string]string{"--grace": "--wait", "--wait": "--grace"} {
		r := runIn(t, "", nil, "lock", "n", flag, "-1s", "--broker", url, "--", "true")
		r.want(t, exitUsage, ptr(""))
		if !strings.Contains(r.stderr, flag+" must not be negative, got -1s") || strings.Contains(r.stderr, other) {
			t.Errorf("%s -1s: stderr %q", flag, r.stderr)
		}
	}
}

// TestLockRefusesAGraceThatDoesNotFitTheTTL: with --grace longer than 2/5
// of --ttl, a command could outlive the lease between SIGTERM and SIGKILL.
func TestLockRefusesAGraceThatDoesNotFitTheTTL(t *testing.T) {
	const url = "mqtt://127.0.0.1:1" // never dialled: usage is checked first
	r := runIn(t, "", nil, "lock", "n", "--ttl", "1s", "--grace", "500ms", "--broker", url, "--", "true")
	r.want(t, exitUsage, ptr(""))
	for _, want := range []string{"--grace 500ms does not fit inside --ttl 1s", "at most 2/5 of --ttl (400ms)", "at least 1.25s"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not contain %q", r.stderr, want)
		}
	}
}

// TestStopRuleFitsInsideTheLease pins the arithmetic behind --grace, on a
// fixed clock: with the longest --grace allowed, a lease renewed on
// schedule (every third of the TTL) is never told to stop, a stop that
// starts on time gets all of --grace, and SIGKILL always lands before the
// deadline, however late the stop started.
func TestStopRuleFitsInsideTheLease(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ttl := range []time.Duration{time.Millisecond, 300 * time.Millisecond, time.Second, 10 * time.Second, time.Minute} {
		for _, grace := range []time.Duration{0, maxGrace(ttl) / 2, maxGrace(ttl)} {
			deadline := t0.Add(ttl) // renewed (sent) at t0
			rule := stopRule{grace: grace, margin: killMargin(ttl), deadline: func() time.Time { return deadline }}
			nextRenewal := t0.Add(ttl / 3)
			if slack := rule.termAt().Sub(nextRenewal); slack < ttl/6 {
				t.Errorf("ttl %s grace %s: stop due %s after the next renewal is sent, want at least ttl/6", ttl, grace, slack)
			}
			if got, want := rule.killAt(rule.termAt()), rule.termAt().Add(grace); !got.Equal(want) {
				t.Errorf("ttl %s grace %s: a stop on time is killed at %s, want after the whole grace (%s)", ttl, grace, got, want)
			}
			for _, late := range []time.Duration{0, grace / 2, grace, ttl} {
				termSent := rule.termAt().Add(late)
				kill := rule.killAt(termSent)
				if !kill.Before(deadline) || kill.After(termSent.Add(grace)) {
					t.Errorf("ttl %s grace %s: stop %s late is killed at deadline%+v, want before the deadline and within grace", ttl, grace, late, kill.Sub(deadline))
				}
			}
		}
		if minTTL(maxGrace(ttl)) > ttl {
			t.Errorf("ttl %s: minTTL(maxGrace) = %s, above the TTL", ttl, minTTL(maxGrace(ttl)))
		}
	}
}
