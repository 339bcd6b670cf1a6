//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperArgsEnv carries the arguments of the ssgen run that
// TestLockTerminalHelper makes, separated by US (0x1F).
const helperArgsEnv = "SSGEN_TEST_LOCK_TERMINAL_ARGS"

// TestLockTerminalHelper is not a test of its own: the terminal test runs
// the test binary with it as ssgen, on a pseudo-terminal. Afterwards it
// prints whether the terminal's foreground is ssgen's group again.
func TestLockTerminalHelper(t *testing.T) {
	args := os.Getenv(helperArgsEnv)
	if args == "" {
		t.Skip("run by TestLockHandsTheTerminalToTheCommand")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, strings.Split(args, "\x1f"))
	stop()
	fg, _ := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	own, _ := unix.Getpgid(0)
	fmt.Printf("foreground-is-ssgen:%t\n", fg == own)
	os.Exit(code)
}

// openPty returns the two ends of a new pseudo-terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// Run from a terminal, ssgen lock gives CMD's process group the terminal's
// foreground, so CMD can read from it (a background group that reads is
// stopped by SIGTTIN, and ssgen would wait for it forever), and takes the
// terminal back when CMD is done.
func TestLockHandsTheTerminalToTheCommand(t *testing.T) {
	url := testStore(t)
	master, slave := openPty(t)
	args := []string{"lock", "--broker", url, "lk", "--", "sh", "-c", `read line; echo "got:$line"`}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockTerminalHelper$")
	cmd.Env = append(os.Environ(), helperArgsEnv+"="+strings.Join(args, "\x1f"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own, with the pseudo-terminal as its controlling
	// terminal and itself in the foreground, as a login shell would be.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close()

	var out syncBuffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			_, _ = out.Write(buf[:n])
			if err != nil {
				return // EIO once every end of the terminal is closed
			}
		}
	}()
	// The line discipline keeps the line until CMD reads it.
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("ssgen lock: %v; terminal output %q", err, out.String())
		}
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		t.Fatalf("ssgen lock never ended (CMD stopped reading the terminal?); output %q", out.String())
	}
	waitFor(t, "the terminal's last line", func() bool { return strings.Contains(out.String(), "foreground-is-ssgen:") })
	if s := out.String(); !strings.Contains(s, "got:hello") || !strings.Contains(s, "foreground-is-ssgen:true") {
		t.Fatalf("terminal output %q: want CMD's got:hello, and the terminal back with ssgen", s)
	}
}
