package proc_test

import (
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/proc"
)

func TestLines(t *testing.T) {
	long := strings.Repeat("x", 64<<10)
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one write, two lines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"a line over writes", []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}},
		{"empty lines", []string{"\n\n"}, []string{"", ""}},
		{"no end yet", []string{"a\nb"}, []string{"a"}},
		{"a long line without its end, in parts", []string{long, "y\n"}, []string{long, "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			w := proc.Lines(func(l string) { got = append(got, l) })
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%d lines %.40q, want %d %.40q", len(got), got, len(tc.want), tc.want)
			}
		})
	}
}

func TestStartKill(t *testing.T) {
	var lines []string
	done := make(chan struct{})
	cmd := exec.Command("sh", "-c", "echo started; exec sleep 60")
	cmd.Stdout = proc.Lines(func(l string) {
		lines = append(lines, l)
		close(done)
	})
	p, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if !p.Running() || p.ProcessState() != nil {
		t.Fatal("not running after it printed")
	}
	p.Kill()
	p.Kill() // an exited process: nothing
	st := p.ProcessState()
	if p.Running() || st == nil {
		t.Fatal("running after Kill")
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("ended %v, want killed by SIGKILL", st)
	}
	if !slices.Equal(lines, []string{"started"}) {
		t.Errorf("output %q", lines)
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := proc.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ports)
	if len(slices.Compact(ports)) != 4 || ports[0] == 0 {
		t.Errorf("ports %v", ports)
	}
}

func TestFindSaysHowToInstall(t *testing.T) {
	_, err := proc.Find("/nonexistent/ssgen-test-server", "ssgen-test-server-nowhere", "apt-get install nothing")
	if err == nil || !strings.Contains(err.Error(), "apt-get install nothing") {
		t.Errorf("err %v", err)
	}
	if bin, err := proc.Find("/nonexistent/sh", "sh", ""); err != nil || !strings.HasSuffix(bin, "/sh") {
		t.Errorf("Find sh: %q, %v", bin, err)
	}
}
