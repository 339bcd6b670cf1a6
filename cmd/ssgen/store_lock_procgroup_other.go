//go:build !unix

package main

import (
	"io"
	"os/exec"
	"syscall"
)

// Without Unix process groups, lock signals CMD alone: processes CMD
// started are not reached.

func ownGroup(*exec.Cmd, io.Reader) (restore func()) { return func() {} }

// signalGroup sends sig to cmd's process; where that signal does not
// exist (SIGTERM on Windows) the process is killed.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if err := cmd.Process.Signal(sig); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

func groupAlive(*exec.Cmd) bool { return false }
