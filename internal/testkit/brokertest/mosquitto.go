// Package brokertest starts a real mosquitto broker for tests: on a free
// loopback port, with a throw-away configuration, stopped by t.Cleanup.
//
// When mosquitto is not installed the test is skipped, unless the
// environment sets SSGEN_REQUIRE_MOSQUITTO=1 (as CI should), which turns
// the skip into a failure.
package brokertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/proc"
)

// Binary is where mosquitto is looked for first; PATH is searched next.
const Binary = "/usr/sbin/mosquitto"

// startTimeout bounds how long mosquitto may take to accept connections.
const startTimeout = 10 * time.Second

// Broker is a mosquitto process that can be stopped and started again on
// the same port, for reconnect tests.
type Broker struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	acl  string  // mosquitto acl_file contents; "" for none
	dyn  *dynsec // the dynamic security plugin's rules; nil for none
	// nagle leaves out set_tcp_nodelay true: mosquitto's default, which
	// delays every request/response round trip by ~40 ms.
	nagle bool

	mu     sync.Mutex
	proc   *proc.Process // nil while stopped
	starts int
}

// Mosquitto starts a broker and returns its URL, mqtt://127.0.0.1:PORT.
func Mosquitto(t testing.TB) string {
	t.Helper()
	return Start(t).URL()
}

// Start starts a broker that the test can Stop and Restart; it is killed
// when the test ends.
func Start(t testing.TB) *Broker {
	t.Helper()
	return start(t, "", nil)
}

// StartNagle starts a broker with mosquitto's default of Nagle's
// algorithm on (no set_tcp_nodelay), as a stock installation runs.
func StartNagle(t testing.TB) *Broker {
	t.Helper()
	return start(t, "", nil, func(b *Broker) { b.nagle = true })
}

// StartWithACL starts a broker that enforces acl, the contents of a
// mosquitto acl_file. Its `topic` lines before any `user` line apply to the
// (anonymous) clients of tests.
func StartWithACL(t testing.TB, acl string) *Broker {
	t.Helper()
	return start(t, acl, nil)
}

func start(t testing.TB, acl string, dyn *dynsec, opts ...func(*Broker)) *Broker {
	t.Helper()
	bin, err := proc.Find(Binary, "mosquitto", "apt-get install mosquitto")
	if err != nil {
		if os.Getenv("SSGEN_REQUIRE_MOSQUITTO") == "1" {
			t.Fatalf("brokertest: %v (SSGEN_REQUIRE_MOSQUITTO=1)", err)
		}
		t.Skipf("brokertest: %v", err)
	}
	b := &Broker{t: t, bin: bin, dir: t.TempDir(), acl: acl, dyn: dyn}
	for _, o := range opts {
		o(b)
	}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			b.dumpLog()
		}
	})
	// A port found free can be taken before mosquitto binds it; retry a
	// few times with a fresh port rather than fail the test.
	for attempt := 0; ; attempt++ {
		var ports []int
		if ports, err = proc.FreePorts(1); err == nil {
			b.port = ports[0]
			err = b.start()
		}
		if err == nil {
			return b
		}
		if attempt == 2 {
			t.Fatalf("brokertest: %v", err)
		}
	}
}

// URL is the broker's address as mqtt://127.0.0.1:PORT; it stays the same
// across restarts.
func (b *Broker) URL() string { return "mqtt://" + b.Addr() }

// Addr is the broker's host:port.
func (b *Broker) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)) }

// Stop kills the broker (as a crash would: no DISCONNECT to clients) and
// waits for it to exit. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return
	}
	b.proc.Kill()
	b.proc = nil
}

// Restart starts the broker again on the same port after Stop.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Stop()
	// The port was just released; TIME_WAIT does not block a listener
	// (mosquitto sets SO_REUSEADDR), but a stray client may still race us.
	var err error
	for range 3 {
		if err = b.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("brokertest: restart: %v", err)
}

func (b *Broker) logPath() string { return filepath.Join(b.dir, "mosquitto.log") }

func (b *Broker) start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	conf := fmt.Sprintf(`per_listener_settings false
listener %d 127.0.0.1
allow_anonymous true
persistence false
log_dest file %s
log_type error
log_type warning
log_type notice
log_type information
connection_messages true
`, b.port, b.logPath())
	if !b.nagle {
		conf += "set_tcp_nodelay true\n"
	}
	if b.acl != "" {
		aclPath := filepath.Join(b.dir, "acl")
		if err := os.WriteFile(aclPath, []byte(b.acl), 0o600); err != nil {
			return err
		}
		conf += "acl_file " + aclPath + "\n"
	}
	if b.dyn != nil {
		dconf, err := b.dyn.config(b.dir)
		if err != nil {
			return err
		}
		conf += dconf
	}
	if os.Geteuid() == 0 {
		// As root mosquitto would drop to "nobody", who cannot write the
		// log in the test's temp dir.
		conf += "user root\n"
	}
	b.starts++
	confPath := filepath.Join(b.dir, fmt.Sprintf("mosquitto-%d.conf", b.starts))
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(b.bin, "-c", confPath)
	out, err := os.OpenFile(filepath.Join(b.dir, "stderr.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = out, out
	p, err := proc.Start(cmd)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			b.proc = p
			return nil
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("mosquitto exited at start (port %d taken?)", b.port)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Kill()
			return fmt.Errorf("mosquitto did not accept connections within %v", startTimeout)
		}
	}
}

func (b *Broker) dumpLog() {
	for _, name := range []string{b.logPath(), filepath.Join(b.dir, "stderr.log")} {
		if data, err := os.ReadFile(name); err == nil && len(data) > 0 {
			b.t.Logf("brokertest: %s:\n%s", filepath.Base(name), data)
		}
	}
}
