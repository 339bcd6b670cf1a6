package ha

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/proc"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
)

// bound is the generous limit of every wait in this package: an election,
// a catch-up, a process start. No test asserts how long these take.
const bound = 60 * time.Second

// Log messages of ssgen serve --store etcd saying which role a process
// took, quoted as slog's text handler writes them (so that "state store
// leadership lost" is not taken for the first).
const (
	leaderLine  = `msg="state store leader"`
	standbyLine = `msg="state store standby"`
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// ssgenBinary builds cmd/ssgen once per test binary (without -race: the
// processes under test are the product, not the test).
func ssgenBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "ssgen-ha-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "ssgen")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, "./cmd/ssgen")
		cmd.Dir = "../../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/ssgen: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// logTail keeps the last lines a process wrote, for the failure report.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 400

func (l *logTail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(line) > 2000 {
		line = line[:2000] + "…"
	}
	l.lines = append(l.lines, line)
	if len(l.lines) > tailLines {
		l.lines = l.lines[len(l.lines)-tailLines:]
	}
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// serveProc is one `ssgen serve` process slot: started, killed with
// SIGKILL and started again (a new process each time) under one name.
type serveProc struct {
	t    *testing.T
	name string
	bin  string
	args []string
	log  logTail

	mu     sync.Mutex
	proc   *proc.Process // nil while stopped
	gen    int
	role   string    // the last role line of the running process: "", "leader", "standby"
	leadAt time.Time // when the running process logged leaderLine
}

func newServeProc(t *testing.T, name string, args ...string) *serveProc {
	p := &serveProc{t: t, name: name, bin: ssgenBinary(t), args: args}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log (last %d lines):\n%s", p.name, tailLines, p.log.String())
		}
	})
	return p
}

// start starts a new process in the slot (which must be stopped).
func (p *serveProc) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		p.t.Fatalf("%s: start while running", p.name)
	}
	p.gen++
	gen := p.gen
	cmd := exec.Command(p.bin, append([]string{"serve"}, p.args...)...)
	cmd.Stdout = io.Discard
	cmd.Stderr = proc.Lines(func(line string) { p.line(gen, line) })
	child, err := proc.Start(cmd)
	if err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	p.proc, p.role = child, ""
	go func() {
		<-child.Exited()
		p.log.add(fmt.Sprintf("[%s#%d] exited: %v", p.name, gen, child.ProcessState()))
	}()
}

// line takes one line the slot's process number gen logged.
func (p *serveProc) line(gen int, line string) {
	p.log.add(fmt.Sprintf("[%s#%d %s] %s", p.name, gen, time.Now().UTC().Format("15:04:05.000"), line))
	role := ""
	switch {
	case strings.Contains(line, leaderLine):
		role = "leader"
	case strings.Contains(line, standbyLine):
		role = "standby"
	case strings.Contains(line, `msg="state store stepped down"`),
		strings.Contains(line, `msg="state store leadership lost`):
		// Neither until it says which.
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == gen {
		p.role = role
		if role == "leader" {
			p.leadAt = time.Now()
		}
	}
}

// kill is kill -9, then reaping the process; a stopped slot stays so.
func (p *serveProc) kill() {
	p.mu.Lock()
	child := p.proc
	p.proc, p.role = nil, ""
	p.gen++ // lines still buffered from the old process no longer count
	p.mu.Unlock()
	if child != nil {
		child.Kill()
	}
}

// state is the slot's role, and whether its process runs.
func (p *serveProc) state() (role string, running bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return "", false
	}
	return p.role, p.proc.Running()
}

// cluster is the ssgen serve processes of one test.
type cluster struct {
	t     *testing.T
	procs []*serveProc
}

// leader waits until exactly one running process has logged that it leads
// and returns it; a process that exited by itself fails the test.
func (c *cluster) leader() *serveProc {
	c.t.Helper()
	var lead *serveProc
	testwait.Until(c.t, bound, "one ssgen serve process to lead", func() bool {
		lead = nil
		n := 0
		for _, p := range c.procs {
			role, running := p.state()
			if !running {
				continue
			}
			if role == "leader" {
				lead = p
				n++
			}
		}
		return n == 1
	})
	return lead
}

// checkRunning fails the test when a process that should run has exited
// by itself.
func (c *cluster) checkRunning() {
	c.t.Helper()
	for _, p := range c.procs {
		p.mu.Lock()
		child := p.proc
		p.mu.Unlock()
		if child != nil && !child.Running() {
			c.t.Fatalf("%s exited by itself: %v", p.name, child.ProcessState())
		}
	}
}

// waitRole waits until p's running process has logged role.
func waitRole(t *testing.T, p *serveProc, role string) {
	t.Helper()
	testwait.Until(t, bound, p.name+" to log "+role, func() bool {
		r, running := p.state()
		if !running {
			t.Fatalf("%s exited while waiting for it to log %s", p.name, role)
		}
		return r == role
	})
}

// dial connects a runtime client to the broker (not through any one
// ssgen process: whichever leads answers).
func dial(t *testing.T, brokerAddr, id string, timeout time.Duration) *runtime.Client {
	t.Helper()
	host, port, err := net.SplitHostPort(brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	pn, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cl, err := runtime.Dial(ctx, runtime.Config{
		Host: host, Port: pn, ClientID: id,
		Timeout: timeout, ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("Dial %s: %v", id, err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}
