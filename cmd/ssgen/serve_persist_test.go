package main

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/proc"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// childArgsEnv carries the ssgen arguments of a child process started from
// this test binary (separated by \x1f), so the crash test needs no nested
// go build.
const childArgsEnv = "SSGEN_TEST_CHILD_ARGS"

// TestServeChildProcess is not a test: it is ssgen's main in a child
// started by the crash tests (serve_kill9_test.go).
func TestServeChildProcess(t *testing.T) {
	args := os.Getenv(childArgsEnv)
	if args == "" {
		t.Skip("runs only as the child of the crash test")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, strings.Split(args, "\x1f"))
	stop()
	os.Exit(code)
}

// serveChild is `ssgen serve` running in a child process.
type serveChild struct {
	proc *proc.Process
	port int
}

// startServeChild starts `ssgen serve` with args on a free loopback port
// and waits for the URL it prints.
func startServeChild(t *testing.T, args ...string) *serveChild {
	t.Helper()
	return startServeChildLogging(t, nil, args...)
}

// startServeChildLogging is startServeChild whose log (stderr) also goes
// to logs, when not nil.
func startServeChildLogging(t *testing.T, logs io.Writer, args ...string) *serveChild {
	t.Helper()
	args = append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChildProcess$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\x1f"))
	cmd.Stderr = servertest.LogWriter(t) // made before c.kill's cleanup: outlives the child
	if logs != nil {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, logs)
	}
	line := make(chan string, 1)
	cmd.Stdout = proc.Lines(func(l string) {
		select {
		case line <- l: // the first one: the URL
		default:
		}
	})
	child, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	c := &serveChild{proc: child}
	t.Cleanup(c.kill)
	select {
	case l := <-line:
		u, err := url.Parse(l)
		if err != nil || u.Scheme != "mqtt" {
			t.Fatalf("child printed %q, want mqtt://127.0.0.1:PORT", l)
		}
		if c.port, err = strconv.Atoi(u.Port()); err != nil || c.port == 0 {
			t.Fatalf("child printed %q", l)
		}
	case <-child.Exited():
		t.Fatalf("child exited before printing its URL: %v", child.ProcessState())
	case <-time.After(20 * time.Second):
		t.Fatal("child printed no URL")
	}
	return c
}

// kill is kill -9, then reaping the process.
func (c *serveChild) kill() { c.proc.Kill() }

func (c *serveChild) dial(t *testing.T, id string) *runtime.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := runtime.Dial(ctx, runtime.Config{
		Host: "127.0.0.1", Port: c.port, ClientID: id,
		Timeout: 3 * time.Second, ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}
