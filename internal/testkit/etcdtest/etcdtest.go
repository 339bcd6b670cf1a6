// Package etcdtest starts real etcd members for tests: n processes of the
// etcd server installed on the machine (Debian's etcd-server package,
// /usr/bin/etcd), on free loopback ports, with data directories in the
// test's temp dir, stopped by t.Cleanup.
//
// Real processes rather than etcd's embeddable server
// (go.etcd.io/etcd/server/v3/embed): a member can be killed with SIGKILL
// as a crash would, and the module does not depend on the server's code.
//
// When etcd is not installed the test is skipped, unless the environment
// sets CI=true or SSGEN_REQUIRE_ETCD=1 (as CI does), which turns the skip
// into a failure.
package etcdtest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
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
)

// Binary is where etcd is looked for first; PATH is searched next.
const Binary = "/usr/bin/etcd"

// healthBound bounds how long a cluster may take to elect a leader and
// answer its health check.
const healthBound = 30 * time.Second

// Cluster is n etcd members started together.
type Cluster struct {
	t       testing.TB
	bin     string
	token   string
	opts    Options
	members []*Member
	health  *http.Client
}

// Options are how StartWith starts the members.
type Options struct {
	// CertFile and KeyFile, when set, make the members serve their client
	// URLs over TLS (https) with this PEM certificate and key; CAFile is
	// the PEM CA that signed it, which the health checks trust.
	CertFile, KeyFile, CAFile string
	// ClientCAFile, when set, requires clients to present a certificate
	// signed by this PEM CA (etcd's --client-cert-auth); ClientCert is
	// what the health checks present.
	ClientCAFile string
	ClientCert   *tls.Certificate
	// QuotaBackendBytes, when positive, is each member's database quota
	// (etcd's --quota-backend-bytes; etcd's default, 2 GiB, otherwise).
	QuotaBackendBytes int64
}

// Member is one etcd process; it keeps its ports and data across Kill
// and Restart.
type Member struct {
	Name      string
	ClientURL string
	PeerURL   string
	dir       string

	mu     sync.Mutex
	proc   *proc.Process // nil while stopped
	starts int
}

// Required reports whether a missing etcd fails the test instead of
// skipping it.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("SSGEN_REQUIRE_ETCD") == "1"
}

// Find returns the etcd binary, or an error saying how to install it.
func Find() (string, error) { return proc.Find(Binary, "etcd", "apt-get install etcd-server") }

// Start starts a cluster of n members and waits until every member
// answers its health check (the cluster has a leader).
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	return StartWith(t, n, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if Required() {
			t.Fatalf("etcdtest: %v (CI=true or SSGEN_REQUIRE_ETCD=1)", err)
		}
		t.Skipf("etcdtest: %v", err)
	}
	if n < 1 {
		t.Fatalf("etcdtest: Start(%d): need at least one member", n)
	}
	c := &Cluster{t: t, bin: bin, token: fmt.Sprintf("ssgen-test-%d-%d", os.Getpid(), time.Now().UnixNano()), opts: opts}
	scheme := "http://"
	c.health = &http.Client{Timeout: time.Second}
	if opts.CertFile != "" {
		scheme = "https://"
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.CAFile != "" {
			pem, err := os.ReadFile(opts.CAFile)
			if err != nil {
				t.Fatalf("etcdtest: %v", err)
			}
			tc.RootCAs = x509.NewCertPool()
			tc.RootCAs.AppendCertsFromPEM(pem)
		}
		if opts.ClientCert != nil {
			tc.Certificates = []tls.Certificate{*opts.ClientCert}
		}
		c.health.Transport = &http.Transport{TLSClientConfig: tc}
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.stop()
		}
		if t.Failed() {
			c.dumpLogs()
		}
	})
	ports, err := proc.FreePorts(2 * n)
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	base := t.TempDir()
	for i := range n {
		c.members = append(c.members, &Member{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: scheme + "127.0.0.1:" + strconv.Itoa(ports[2*i]),
			PeerURL:   "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1]),
			dir:       filepath.Join(base, fmt.Sprintf("m%d", i)),
		})
	}
	for _, m := range c.members {
		if err := c.start(m); err != nil {
			t.Fatalf("etcdtest: %v", err)
		}
	}
	for i := range c.members {
		c.WaitHealthy(i)
	}
	return c
}

// Endpoints are the members' client addresses, host:port each.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		_, eps[i], _ = strings.Cut(m.ClientURL, "://")
	}
	return eps
}

// URL is the cluster as ssgen serve's --store takes it:
// etcd://HOST:PORT,HOST:PORT,...
func (c *Cluster) URL() string { return "etcd://" + strings.Join(c.Endpoints(), ",") }

// Member returns member i.
func (c *Cluster) Member(i int) *Member { return c.members[i] }

// Size is the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Kill stops member i with SIGKILL, as a crash would, and waits for it to
// exit. Killing a stopped member does nothing.
func (c *Cluster) Kill(i int) { c.members[i].stop() }

// Restart starts member i again, on its ports and data, after Kill (it
// kills it first when it runs) and waits until it is healthy.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	m := c.members[i]
	m.stop()
	var err error
	for range 3 {
		if err = c.start(m); err == nil {
			c.WaitHealthy(i)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("etcdtest: restart %s: %v", m.Name, err)
}

// WaitHealthy waits until member i answers its health check.
func (c *Cluster) WaitHealthy(i int) {
	c.t.Helper()
	m := c.members[i]
	testwait.Until(c.t, healthBound, "etcd member "+m.Name+" healthy", func() bool { return m.healthy(c.health) })
}

func (c *Cluster) start(m *Member) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var initial []string
	for _, o := range c.members {
		initial = append(initial, o.Name+"="+o.PeerURL)
	}
	m.starts++
	out, err := os.OpenFile(m.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	args := []string{
		"--name", m.Name,
		"--data-dir", m.dir,
		"--listen-client-urls", m.ClientURL,
		"--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.PeerURL,
		"--initial-advertise-peer-urls", m.PeerURL,
		"--initial-cluster", strings.Join(initial, ","),
		"--initial-cluster-state", "new",
		"--initial-cluster-token", c.token,
		"--logger", "zap",
		"--log-level", "warn",
	}
	if c.opts.CertFile != "" {
		args = append(args, "--cert-file", c.opts.CertFile, "--key-file", c.opts.KeyFile)
	}
	if c.opts.QuotaBackendBytes > 0 {
		args = append(args, "--quota-backend-bytes", strconv.FormatInt(c.opts.QuotaBackendBytes, 10))
	}
	if c.opts.ClientCAFile != "" {
		args = append(args, "--client-cert-auth", "--trusted-ca-file", c.opts.ClientCAFile)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Debian's package reads ETCD_* settings; the test's flags are the
	// whole configuration.
	cmd.Env = cleanEnv()
	m.proc, err = proc.Start(cmd)
	return err
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}

func (m *Member) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		m.proc.Kill()
		m.proc = nil
	}
}

// Running reports whether the member's process runs.
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc != nil && m.proc.Running()
}

// healthy asks the member's /health endpoint, which answers true once the
// cluster has a leader and this member can serve.
func (m *Member) healthy(hc *http.Client) bool {
	resp, err := hc.Get(m.ClientURL + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`)
}

func (c *Cluster) dumpLogs() {
	for _, m := range c.members {
		data, err := os.ReadFile(m.dir + ".log")
		if err != nil || len(data) == 0 {
			continue
		}
		if len(data) > 16<<10 {
			data = data[len(data)-16<<10:]
		}
		c.t.Logf("etcdtest: %s log (tail):\n%s", m.Name, data)
	}
}
