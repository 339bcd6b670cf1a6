package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/failovertest"
	"github.com/ssgen/ssgen/internal/testkit/proc"
	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestServeStoreEtcdUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--store", "etcd://127.0.0.1:2379"}, "--store etcd:// needs --broker"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--data-dir", t.TempDir()}, "--store etcd:// excludes --data-dir"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--ui"}, "--store etcd:// excludes --ui"},
		// Not "--clock manual needs --http or --ui", which --store excludes too.
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--clock", "manual"}, "--store etcd:// excludes --clock manual"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "http://127.0.0.1:2379"}, "want etcd://HOST:PORT"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1"}, "want HOST:PORT"},
		{[]string{"serve", "--etcd-prefix", "/x/"}, "--etcd-prefix needs --store"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-cert-file", "c.pem"}, "--etcd-cert-file and --etcd-key-file go together"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-password-file", "p"}, "--etcd-password-file needs --etcd-user"},
		{[]string{"serve", "--etcd-lease", "5s"}, "--etcd-lease needs --store"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-lease", "1s"}, "--etcd-lease 1s: want whole seconds from 2s"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-lease", "2m"}, "--etcd-lease 2m0s: want whole seconds from 2s"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-lease", "2500ms"}, "--etcd-lease 2.5s: want whole seconds"},
	} {
		r := runIn(t, "", nil, tc.args...)
		r.want(t, exitUsage, nil)
		if !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%v: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
}

// etcdChild is `ssgen serve --store etcd://` in a child process.
type etcdChild struct {
	proc *proc.Process
	log  *syncBuffer
}

func startEtcdChild(t *testing.T, args ...string) *etcdChild {
	t.Helper()
	return startEtcdChildEnv(t, nil, args...)
}

// startEtcdChildEnv is startEtcdChild with more environment variables.
func startEtcdChildEnv(t *testing.T, env []string, args ...string) *etcdChild {
	t.Helper()
	args = append([]string{"serve", "--log-level", "info"}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChildProcess$")
	cmd.Env = append(append(os.Environ(), env...), childArgsEnv+"="+strings.Join(args, "\x1f"))
	c := &etcdChild{log: &syncBuffer{}}
	cmd.Stderr = multiWriter{servertest.LogWriter(t), c.log}
	var err error
	if c.proc, err = proc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	return c
}

type multiWriter []interface{ Write([]byte) (int, error) }

func (m multiWriter) Write(p []byte) (int, error) {
	for _, w := range m {
		_, _ = w.Write(p)
	}
	return len(p), nil
}

func (c *etcdChild) kill() { c.proc.Kill() }

func (c *etcdChild) waitLog(t *testing.T, what string) {
	t.Helper()
	testwait.Until(t, 60*time.Second, "a child logging "+what, func() bool { return strings.Contains(c.log.String(), what) })
}

// Two `ssgen serve --store etcd://` processes on one broker: the leader
// gets kill -9; the standby takes over with every acknowledged write, its
// version and fencing token, and the KEYNOTIFY registration made on the
// dead leader.
func TestServeStoreEtcdSurvivesKill9OfTheLeader(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	// A lease shorter than the default: the standby takes over sooner.
	args := []string{"--broker", b.URL(), "--store", c.URL(), "--etcd-prefix", "/kill9/", "--etcd-lease", "2s"}
	leader := startEtcdChild(t, args...)
	leader.waitLog(t, "state store leader")
	standby := startEtcdChild(t, args...)
	standby.waitLog(t, "state store standby")
	if !strings.Contains(standby.log.String(), "lease=2s") {
		t.Fatalf("the standby's log does not name its 2s lease: %s", standby.log.String())
	}

	check := failovertest.Before(t, b.URL(), 16)
	if strings.Contains(standby.log.String(), "state store leader") {
		t.Fatal("the standby leads while the leader lives")
	}
	killed := time.Now()
	leader.kill()
	standby.waitLog(t, "state store leader")
	t.Logf("failover: the standby leads %v after the kill (informational)", time.Since(killed).Round(time.Millisecond))
	check.After()
}

// serve reaches etcd over TLS with a client certificate (etcd's
// --client-cert-auth) through the --etcd-* flags.
func TestServeStoreEtcdOverTLSWithAClientCertificate(t *testing.T) {
	ca := testcert.NewCA(t, "etcd test CA")
	certFile, keyFile := testcert.Files(t, ca.Server(t, "etcd"))
	client := ca.Client(t, "ssgen")
	clientCert, clientKey := testcert.Files(t, client)
	c := etcdtest.StartWith(t, 1, etcdtest.Options{
		CertFile: certFile, KeyFile: keyFile, CAFile: ca.CAFile(t),
		ClientCAFile: ca.CAFile(t), ClientCert: &client,
	})
	b := brokertest.Start(t)
	leader := startEtcdChild(t, "--broker", b.URL(), "--store", c.URL(),
		"--etcd-ca-file", ca.CAFile(t), "--etcd-cert-file", clientCert, "--etcd-key-file", clientKey)
	leader.waitLog(t, "state store leader")
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	if _, err := cl.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := cl.Get(ctx, []byte("k")); err != nil || string(got) != "v" {
		t.Fatalf("GET = %q %v", got, err)
	}
}

// serve authenticates to etcd with --etcd-user and a password from
// SSGEN_ETCD_PASSWORD or --etcd-password-file; a wrong one is refused.
func TestServeStoreEtcdAuthenticates(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := clienttest.Context(t)
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "s3cret"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	_ = cli.Close()
	b := brokertest.Start(t)
	args := []string{"--broker", b.URL(), "--store", c.URL(), "--etcd-user", "root"}
	leader := startEtcdChildEnv(t, []string{"SSGEN_ETCD_PASSWORD=s3cret"}, args...)
	leader.waitLog(t, "state store leader")
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	standby := startEtcdChild(t, append(args, "--etcd-password-file", file)...)
	standby.waitLog(t, "state store standby")
	leader.kill()
	standby.waitLog(t, "state store leader")

	wrong := startEtcdChildEnv(t, []string{"SSGEN_ETCD_PASSWORD=wrong"}, args...)
	<-wrong.proc.Exited()
	if wrong.proc.ProcessState().Success() {
		t.Fatal("serve with a wrong etcd password exited 0")
	}
	if !strings.Contains(wrong.log.String(), "authentication failed") {
		t.Fatalf("serve with a wrong etcd password logged %q", wrong.log.String())
	}
}

// serve refuses --store endpoints of two different etcd clusters (exit 2),
// naming each endpoint's cluster, instead of leading on each.
func TestServeStoreEtcdRefusesEndpointsOfDifferentClusters(t *testing.T) {
	one, other := etcdtest.Start(t, 1), etcdtest.Start(t, 1)
	eps := append(one.Endpoints(), other.Endpoints()...)
	r := runIn(t, "", nil, "serve", "--broker", "127.0.0.1:1883", "--store", "etcd://"+strings.Join(eps, ","))
	r.want(t, exitUsage, nil)
	for _, want := range []string{"different clusters", eps[0] + " (cluster ", eps[1] + " (cluster "} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("stderr %q, want %q", r.stderr, want)
		}
	}
}

// serve refuses (exit 2) an --etcd-prefix inside another store's, and "/".
func TestServeStoreEtcdRefusesNestedPrefixes(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// What a store at /ssgen/ that wrote anything leaves: its clock.
	if _, err := cli.Put(clienttest.Context(t), "/ssgen/clock", "x"); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]string{
		"/ssgen/sub": `prefix "/ssgen/sub/" lies inside the store at prefix "/ssgen/"`,
		"/":          `prefix "/" is refused`,
	} {
		r := runIn(t, "", nil, "serve", "--broker", "127.0.0.1:1883", "--store", c.URL(), "--etcd-prefix", prefix)
		r.want(t, exitUsage, nil)
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("--etcd-prefix %s: stderr %q, want %q", prefix, r.stderr, want)
		}
	}
}
