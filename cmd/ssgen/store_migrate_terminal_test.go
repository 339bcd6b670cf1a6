//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ptyOutput collects what the program writes to a pseudo-terminal.
type ptyOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (p *ptyOutput) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// TestMigrateApplyOnATerminal: with stdin a terminal, apply asks first
// (anything but y writes nothing); answered y, it draws its progress as
// one line redrawn with \r, ended with a newline, instead of JSON lines.
func TestMigrateApplyOnATerminal(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	master, slave := openPty(t)
	defer slave.Close()
	var out ptyOutput
	done := make(chan struct{})
	questions := make(chan struct{}, 16) // one per question shown
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.mu.Lock()
			before := strings.Count(out.b.String(), "[y/N]")
			out.b.Write(buf[:n])
			asked := strings.Count(out.b.String(), "[y/N]") > before
			out.mu.Unlock()
			if asked {
				select {
				case questions <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	apply := func(answer string, extra ...string) (int, string) {
		if answer != "" {
			if _, err := io.WriteString(master, answer); err != nil {
				t.Fatal(err)
			}
		}
		var stdout syncBuffer
		env := &cliEnv{stdin: slave, stdout: &stdout, stderr: slave, getenv: func(string) string { return "" }}
		args := append([]string{"migrate", "apply", "--broker", url, "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl")}, extra...)
		return runCLI(context.Background(), env, args), stdout.String()
	}
	code, stdout := apply("n\n")
	if code != exitNegative || stdout != "" {
		t.Fatalf("answered n: exit %d, stdout %q", code, stdout)
	}
	waitFor(t, "the question and the refusal", func() bool {
		s := out.String()
		return strings.Contains(s, "[y/N]") && strings.Contains(s, "not confirmed: nothing written")
	})
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitNegative, nil)

	code, stdout = apply("y\n")
	if code != exitOK || !strings.Contains(stdout, "3 rewritten") {
		t.Fatalf("answered y: exit %d, stdout %q, terminal %q", code, stdout, out.String())
	}
	waitFor(t, "the progress bar", func() bool {
		s := out.String()
		return strings.Contains(s, "\r[####################] 1/1 SetPoint") && strings.Contains(s, "keys/s")
	})
	if s := out.String(); strings.Contains(s, `{"decl"`) {
		t.Errorf("JSON progress on a terminal: %q", s)
	}
	// --yes asks nothing (nothing is outdated any more: nothing to do).
	seedEvolveV1(t, url)
	before := strings.Count(out.String(), "[y/N]")
	if code, _ := apply("", "--yes"); code != exitOK {
		t.Fatalf("--yes: exit %d; terminal %q", code, out.String())
	}
	if strings.Count(out.String(), "[y/N]") != before {
		t.Errorf("--yes asked: %q", out.String())
	}
	// Ctrl-C at the question: nothing written, exit 130 (last: the
	// question's reader is left waiting on the terminal).
	seedEvolveV1(t, url)
	for len(questions) > 0 {
		<-questions
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Ctrl-C once asked (or after a generous bound: the exit code
		// then tells).
		defer cancel()
		select {
		case <-questions:
		case <-time.After(10 * time.Second):
		}
	}()
	var stdout2 syncBuffer
	env := &cliEnv{stdin: slave, stdout: &stdout2, stderr: slave, getenv: func(string) string { return "" }}
	if code := runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl")}); code != exitInterrupted {
		t.Fatalf("Ctrl-C at the question: exit %d; terminal %q", code, out.String())
	}
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitNegative, nil)
	_ = slave.Close()
	_ = master.Close()
	<-done
}
