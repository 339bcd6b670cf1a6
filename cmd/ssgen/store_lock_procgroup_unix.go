//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Unix, lock runs CMD as the leader of a process group of its own, and
// every signal it sends goes to that group: whatever CMD started (a shell's
// children, a pipeline, a background job) is stopped with it, instead of
// being re-parented and running on without the lease. A process that
// leaves the group (setsid, setpgid) escapes it.

// ownGroup makes cmd start in a new process group whose id is its pid.
// When ssgen runs in the foreground of the terminal that is its stdin, the
// new group becomes the terminal's foreground group, as a shell does for a
// job: CMD can read from the terminal, and Ctrl-C and Ctrl-\ reach it. The
// returned function, safe to call more than once, hands the terminal back
// to ssgen's own group; call it once CMD has exited.
func ownGroup(cmd *exec.Cmd, stdin io.Reader) (restore func()) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	cmd.SysProcAttr = attr
	f, ok := stdin.(*os.File)
	if !ok {
		return func() {}
	}
	fd := int(f.Fd())
	own, err := unix.Getpgid(0)
	if err != nil {
		return func() {}
	}
	if fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || fg != own {
		return func() {} // not a terminal, or we are not in its foreground
	}
	attr.Foreground, attr.Ctty = true, fd
	var once sync.Once
	return func() {
		once.Do(func() {
			// A background group that sets the foreground is sent SIGTTOU,
			// which would stop ssgen, unless it ignores the signal.
			if !signal.Ignored(syscall.SIGTTOU) {
				signal.Ignore(syscall.SIGTTOU)
				defer signal.Reset(syscall.SIGTTOU)
			}
			_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, own)
		})
	}
}

// signalGroup sends sig to every process in cmd's group. A group that no
// longer exists is not an error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether a live process is left in cmd's group. A
// zombie is not live: it has ended, and only waits for its new parent
// (init, which in a container may never come to it) to collect it.
func groupAlive(cmd *exec.Cmd) bool {
	pgid := cmd.Process.Pid
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	return liveMember(pgid)
}
