package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/servertest"
)

// childArgsEnv carries the ssgen arguments of a child process started from
// this test binary (separated by \x1f), so the crash test needs no nested
// go build.
const childArgsEnv = "SSGEN_TEST_CHILD_ARGS"

// TestServeChildProcess is not a test: it is ssgen's main in a child
// started by TestServeKeepsAcknowledgedWritesAcrossKill9.
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
	cmd  *exec.Cmd
	port int
}

// startServeChild starts `ssgen serve` with args on a free loopback port
// and waits for the URL it prints.
func startServeChild(t *testing.T, args ...string) *serveChild {
	t.Helper()
	args = append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "warn"}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChildProcess$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\x1f"))
	cmd.Stderr = servertest.LogWriter(t) // made before c.kill's cleanup: outlives the child
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &serveChild{cmd: cmd}
	t.Cleanup(c.kill)
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		u, err := url.Parse(l)
		if !ok || err != nil || u.Scheme != "mqtt" {
			t.Fatalf("child printed %q, want mqtt://127.0.0.1:PORT", l)
		}
		if c.port, err = strconv.Atoi(u.Port()); err != nil || c.port == 0 {
			t.Fatalf("child printed %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("child printed no URL")
	}
	return c
}

// kill is kill -9, then reaping the process.
func (c *serveChild) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

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

// ack is an acknowledged SET.
type ack struct {
	value   string
	version hlc.HLC
}

// Every SET that was answered before a kill -9 must be there, with its
// value and version, after a restart on the same data directory; keys
// written without aio-persistence must not. The load is bounded in
// count, the kill comes after a fixed number of acknowledgements (never
// after a time), and writes in flight at the kill may land or not.
func TestServeKeepsAcknowledgedWritesAcrossKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const (
		writers   = 4
		perWriter = 400 // the bound; the kill comes long before
		killAfter = 300 // acknowledged writes
	)
	dir := t.TempDir()
	child := startServeChild(t, "--data-dir", dir)
	cl := child.dial(t, "crash-writer")

	ctx := context.Background()
	if _, err := cl.Set(ctx, []byte("volatile"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}

	// Cancelled at the kill, so the writes in flight end at once instead
	// of waiting for a reconnection.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var (
		mu     sync.Mutex
		acked  = map[string]ack{}
		count  atomic.Int64
		killed = make(chan struct{})
		once   sync.Once
		wg     sync.WaitGroup
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				select {
				case <-killed:
					return
				default:
				}
				key := fmt.Sprintf("crash/%d/%d", w, i)
				value := fmt.Sprintf("value-%d-%d", w, i)
				rctx, cancel := context.WithTimeout(loadCtx, 3*time.Second)
				v, err := cl.Set(rctx, []byte(key), []byte(value), runtime.SetOptions{Persist: true})
				cancel()
				if err != nil {
					continue // unacknowledged: may or may not have landed
				}
				mu.Lock()
				acked[key] = ack{value, v}
				mu.Unlock()
				if count.Add(1) == killAfter {
					once.Do(func() {
						child.kill()
						close(killed)
						stopLoad()
					})
				}
			}
		}()
	}
	wg.Wait()
	once.Do(func() { child.kill(); close(killed) })
	_ = cl.Close()
	if len(acked) < killAfter {
		t.Fatalf("only %d writes acknowledged before the kill", len(acked))
	}

	child = startServeChild(t, "--data-dir", dir)
	cl = child.dial(t, "crash-reader")
	var top hlc.HLC
	for key, want := range acked {
		got, v, err := cl.Get(ctx, []byte(key))
		if err != nil {
			t.Fatalf("GET %s after restart: %v (acknowledged %q at %v)", key, err, want.value, want.version)
		}
		if string(got) != want.value || v != want.version {
			t.Fatalf("GET %s = %q %v, acknowledged %q %v", key, got, v, want.value, want.version)
		}
		if v.Compare(top) > 0 {
			top = v
		}
	}
	if _, _, err := cl.Get(ctx, []byte("volatile")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GET volatile after restart: %v, want not found", err)
	}
	v, err := cl.Set(ctx, []byte("after"), []byte("x"), runtime.SetOptions{Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	if v.Compare(top) <= 0 {
		t.Fatalf("version after restart %v not after %v", v, top)
	}
	t.Logf("%d acknowledged writes survived kill -9", len(acked))
}
