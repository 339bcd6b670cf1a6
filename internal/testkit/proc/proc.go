// Package proc runs the real servers of tests (mosquitto, etcd, ssgen
// itself) as child processes: Find looks for a server's binary, Start
// reaps a process in the background, Process.Kill stops it with SIGKILL as
// a crash would, Lines reads its output line by line, and FreePorts finds
// loopback ports for it to listen on.
package proc

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// Process is a started child process.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts cmd, with its input and output already set, and waits for
// it in the background. Output written to something other than a file is
// copied before the process counts as exited.
func Start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Kill stops the process with SIGKILL and returns once it has exited.
// Killing an exited process does nothing.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ProcessState is how the process ended; nil while it runs.
func (p *Process) ProcessState() *os.ProcessState {
	if p.Running() {
		return nil
	}
	return p.cmd.ProcessState
}

// Find returns the server's binary: path if it exists, else name on
// PATH; its error says how to install it (install, such as "apt-get
// install mosquitto").
func Find(path, name, install string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found (%s)", name, install)
}

// FreePorts returns n distinct loopback ports that were free when it
// looked, all held open until every one was chosen. Another program may
// still take one before the server binds it: callers retry with new
// ports when a start fails.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// maxLine is where Lines cuts a line that has no end yet.
const maxLine = 64 << 10

// Lines is a writer for a process's output (cmd.Stdout, cmd.Stderr) that
// calls fn with each line, without its newline, in order. A line whose
// end has not come after 64 KiB is passed on in parts; a last line the
// process did not end is not passed on.
func Lines(fn func(line string)) io.Writer { return &lineWriter{fn: fn} }

type lineWriter struct {
	fn      func(string)
	pending []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.pending = append(w.pending, b...)
			if len(w.pending) >= maxLine {
				w.fn(string(w.pending))
				w.pending = w.pending[:0]
			}
			break
		}
		w.fn(string(append(w.pending, b[:i]...)))
		w.pending, b = w.pending[:0], b[i+1:]
	}
	return n, nil
}
