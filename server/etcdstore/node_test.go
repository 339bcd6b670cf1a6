package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/failovertest"
	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// bound is how long a test waits for a leader, a failover or an answer.
const bound = 30 * time.Second

// running is one node started by a test.
type running struct {
	*Node
	cancel context.CancelFunc
	done   chan error
}

// startNode runs a node on etcd cluster c and the broker at brokerAddr,
// stopped (resigning) when the test ends unless stop or abort came first.
func startNode(t *testing.T, c *etcdtest.Cluster, brokerAddr, name string, adjust ...func(*Config)) *running {
	t.Helper()
	log := slog.New(slog.NewTextHandler(servertest.LogWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", name)
	cfg := Config{
		Endpoints: c.Endpoints(),
		LeaseTTL:  time.Second,
		Server:    server.Options{Broker: brokerAddr, Logger: log},
	}
	for _, f := range adjust {
		f(&cfg)
	}
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Node: n, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- n.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

// stop ends the node as a clean shutdown does (it resigns).
func (r *running) stop() {
	r.cancel()
	<-r.done
	r.done <- nil // for a second stop
}

// abort ends the node as a killed process would: no resignation, its
// lease left to expire.
func (r *running) abort() {
	r.aborted.Store(true)
	r.stop()
}

func (r *running) waitLeader(t *testing.T) *server.Server {
	t.Helper()
	testwait.Until(t, bound, "a leader", func() bool { return r.Server() != nil })
	return r.Server()
}

func TestWritesSurviveARestartOfTheOnlyInstance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	a.waitLeader(t)
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	fence := hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "locker"}
	v1, err := cl.Set(ctx, []byte("plain"), []byte("one"), runtime.SetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := cl.Set(ctx, []byte("fenced"), []byte("two"), runtime.SetOptions{FencingToken: fence})
	if err != nil {
		t.Fatal(err)
	}
	a.stop()

	bnode := startNode(t, c, b.URL(), "b")
	bnode.waitLeader(t)
	for key, want := range map[string]struct {
		value   string
		version hlc.HLC
	}{"plain": {"one", v1}, "fenced": {"two", v2}} {
		got, v, err := cl.Get(ctx, []byte(key))
		if err != nil || string(got) != want.value || v != want.version {
			t.Fatalf("GET %s after restart = %q %v %v, want %q %v", key, got, v, err, want.value, want.version)
		}
	}
	// The fence held: an older token is refused, the same one accepted.
	older := fence
	older.Wall--
	if _, err := cl.Set(ctx, []byte("fenced"), []byte("x"), runtime.SetOptions{FencingToken: older}); err == nil {
		t.Fatal("SET with an older fencing token accepted after the restart")
	}
	v3, err := cl.Set(ctx, []byte("fenced"), []byte("three"), runtime.SetOptions{FencingToken: fence})
	if err != nil {
		t.Fatal(err)
	}
	if v3.Compare(v2) <= 0 || v3.Compare(v1) <= 0 {
		t.Fatalf("version after restart %v not after %v and %v", v3, v1, v2)
	}
}

func TestStandbyTakesOverWhenTheLeaderDiesWithoutResigning(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	a.waitLeader(t)
	s := startNode(t, c, b.URL(), "s")
	check := failovertest.Before(t, b.URL(), 20)
	// The registration was in etcd before KEYNOTIFY was answered.
	cli := dialEtcd(t, c)
	if resp, err := cli.Get(clienttest.Context(t), DefaultPrefix+watchKey(check.Watcher.ClientID(), failovertest.Watched)); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("registration in etcd after KEYNOTIFY was answered: %v %v", resp, err)
	}
	if s.Server() != nil {
		t.Fatal("the standby serves while the leader lives")
	}
	a.abort()
	s.waitLeader(t)
	check.After()
}

func TestADeposedLeaderCannotWrite(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	srv := a.waitLeader(t)
	a.mu.Lock()
	lead := a.lead
	a.mu.Unlock()

	// Revoke the leader's lease behind its back: its election key goes.
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := clienttest.Context(t)
	resp, err := cli.Get(ctx, lead.key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("election key %q: %v %v", lead.key, resp, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}

	ts := hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "c"}.String()
	res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte("late"), []byte("v")}, Client: "c", Timestamp: ts, HasTimestamp: true})
	if !strings.Contains(string(res.Payload), string(engine.ErrPersistence)) {
		t.Fatalf("SET on the deposed leader answered %q, want the persistence failure", res.Payload)
	}
	if err := lead.Commit([]engine.Change{{Record: engine.Record{Key: "late2", Value: []byte("v")}}}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Commit on the deposed leader: %v, want ErrNotLeader", err)
	}
	got, err := cli.Get(ctx, DefaultPrefix+keysDir, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || got.Count != 0 {
		t.Fatalf("etcd holds %v keys (%v) after the deposed leader's writes, want none", got.Count, err)
	}
	// It steps down, and wins again as a standby would.
	testwait.Until(t, bound, "the deposed leader to step down", func() bool { return a.Server() != srv })
	a.waitLeader(t)
}

func TestOpenFailsWhenEtcdIsUnreachable(t *testing.T) {
	_, err := Open(Config{
		Endpoints:   []string{"127.0.0.1:1"},
		DialTimeout: time.Second,
		Server:      server.Options{Broker: "127.0.0.1:1883"},
	})
	if err == nil || !strings.Contains(err.Error(), "etcd at 127.0.0.1:1 unreachable") {
		t.Fatalf("Open = %v, want etcd unreachable", err)
	}
	// The cause the etcd client does not report: nothing listens there.
	if !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Open = %v, want the dial error (connection refused)", err)
	}
}

// Endpoints of two different etcd clusters would make two stores with a
// leader each: Open refuses them, naming each endpoint's cluster.
func TestOpenRefusesEndpointsOfDifferentClusters(t *testing.T) {
	one, other := etcdtest.Start(t, 1), etcdtest.Start(t, 1)
	eps := append(one.Endpoints(), other.Endpoints()...)
	n, err := Open(Config{Endpoints: eps, Server: server.Options{Broker: "127.0.0.1:1883"}})
	if err == nil {
		_ = n.cli.Close()
		t.Fatal("Open accepted endpoints of two clusters")
	}
	if !errors.Is(err, ErrMixedClusters) {
		t.Fatalf("Open = %v, want ErrMixedClusters", err)
	}
	for _, ep := range eps {
		if !strings.Contains(err.Error(), ep+" (cluster ") {
			t.Fatalf("Open = %v, want it to name %s and its cluster", err, ep)
		}
	}
	// One cluster's endpoints are fine.
	n, err = Open(Config{Endpoints: one.Endpoints(), Server: server.Options{Broker: "127.0.0.1:1883"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = n.cli.Close()
}

// The leader compacts etcd's history; a standby whose watch falls behind
// the compaction reloads; expired keys are deleted in etcd by the leader.
func TestLeaderCompactsHistoryAndExpiresKeys(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) { cfg.CompactEvery = 50 * time.Millisecond })
	a.waitLeader(t)
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	if _, err := cl.Set(ctx, []byte("short"), []byte("v"), runtime.SetOptions{TTL: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	cli := dialEtcd(t, c)
	testwait.Until(t, bound, "the expired key deleted in etcd", func() bool {
		resp, err := cli.Get(ctx, DefaultPrefix+keysDir+"short")
		return err == nil && len(resp.Kvs) == 0
	})
	testwait.Until(t, bound, "etcd's history compacted", func() bool {
		if _, err := cl.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cli.Get(ctx, "any", clientv3.WithRev(1))
		return err != nil && strings.Contains(err.Error(), "compacted")
	})
	// A watch from before the compaction cannot resume: the follower
	// reports it, and reloads.
	f := newFollower(cli, DefaultPrefix, slog.New(slog.NewTextHandler(servertest.LogWriter(t), nil)))
	f.st = &state{rev: 1}
	if err := f.watch(ctx); !errors.Is(err, errCompacted) {
		t.Fatalf("watch from revision 2 after compaction: %v, want errCompacted", err)
	}
}

// A client cannot make the leader step down with a key or value too large
// for etcd: the server refuses it (the limits are lowered), and a change
// over etcd's request size that reaches Commit anyway is refused before
// anything is sent, leaving the leader in place.
func TestOversizedWritesDoNotDeposeTheLeader(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	srv := a.waitLeader(t)
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	if _, err := cl.Set(ctx, []byte("big"), make([]byte, MaxValueBytes+1), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("SET of a value over MaxValueBytes: %v, want the quota refusal", err)
	}
	if _, err := cl.Set(ctx, make([]byte, MaxKeyBytes+1), []byte("v"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("SET of a key over MaxKeyBytes: %v, want the quota refusal", err)
	}
	a.mu.Lock()
	lead := a.lead
	a.mu.Unlock()
	if err := lead.Commit([]engine.Change{{Record: engine.Record{Key: "huge", Value: make([]byte, 2<<20)}}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Commit of a 2 MiB value: %v, want ErrTooLarge", err)
	}
	if _, err := cl.Set(ctx, []byte("small"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatalf("SET after the refusals: %v", err)
	}
	if a.Server() != srv {
		t.Fatal("the leader stepped down")
	}
}

// One etcd member of three dies while the leader writes: every write
// acknowledged before, during and after is there after a failover.
func TestAcknowledgedWritesSurviveTheLossOfAnEtcdMember(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	a.waitLeader(t)
	s := startNode(t, c, b.URL(), "s")
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	acked := map[string]hlc.HLC{}
	write := func(round string) {
		for i := range 10 {
			key := round + string(rune('a'+i))
			// A write refused or unanswered while etcd elects a leader
			// is not acknowledged: try the next one.
			if v, err := cl.Set(ctx, []byte(key), []byte(key), runtime.SetOptions{}); err == nil {
				acked[key] = v
			}
		}
	}
	write("before")
	c.Kill(0)
	write("during")
	c.Restart(0)
	write("after")
	if len(acked) == 0 {
		t.Fatal("no write acknowledged")
	}
	var leader, standby *running = a, s
	if a.Server() == nil {
		leader, standby = s, a // a stepped down meanwhile
	}
	leader.abort()
	standby.waitLeader(t)
	for key, v := range acked {
		got, gv, err := cl.Get(ctx, []byte(key))
		if err != nil || string(got) != key || gv != v {
			t.Fatalf("GET %s = %q %v %v, want version %v", key, got, gv, err, v)
		}
	}
	t.Logf("%d of 30 writes acknowledged", len(acked))
}

// An etcd that requires client certificates refuses a node without one:
// Open fails within its dial timeout.
func TestOpenFailsWithoutTheClientCertificateEtcdRequires(t *testing.T) {
	ca := testcert.NewCA(t, "etcd test CA")
	certFile, keyFile := testcert.Files(t, ca.Server(t, "etcd"))
	client := ca.Client(t, "ssgen")
	c := etcdtest.StartWith(t, 1, etcdtest.Options{
		CertFile: certFile, KeyFile: keyFile, CAFile: ca.CAFile(t),
		ClientCAFile: ca.CAFile(t), ClientCert: &client,
	})
	_, err := Open(Config{
		Endpoints:   c.Endpoints(),
		TLS:         &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12},
		DialTimeout: time.Second,
		Server:      server.Options{Broker: "mqtt://127.0.0.1:1883"},
	})
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Open without a client certificate = %v, want etcd unreachable", err)
	}
}

// Without an etcd quorum the leader steps down and nobody serves; once
// the quorum is back, an instance leads again with the store intact.
func TestNoQuorumNoLeaderThenRecovery(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	a.waitLeader(t)
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	v, err := cl.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	c.Kill(2)
	testwait.Until(t, bound, "the leader to step down without a quorum", func() bool { return a.Server() == nil })
	c.Restart(1)
	a.waitLeader(t)
	got, gv, err := cl.Get(ctx, []byte("k"))
	if err != nil || string(got) != "v" || gv != v {
		t.Fatalf("GET after the quorum came back = %q %v %v, want version %v", got, gv, err, v)
	}
}

// A leader whose transaction fails because etcd lost its quorum answers
// the requests of that transaction with the persistence error before it
// leaves the broker: the client hears -ERR, not its own timeout.
func TestNoQuorumAnswersThePersistenceError(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	// As with the defaults (a 3 s session, 5 s transactions), the session
	// ends before the transaction under way fails: the step-down must
	// still wait for that transaction's answers.
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) {
		cfg.LeaseTTL = 2 * time.Second
		cfg.TxnTimeout = 5 * time.Second
	})
	a.waitLeader(t)
	cfg, err := runtime.FromURL(b.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 25 * time.Second
	cl, err := runtime.Dial(clienttest.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := clienttest.Context(t)
	if _, err := cl.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Kill(1)
	c.Kill(2)
	_, err = cl.Set(ctx, []byte("k"), []byte("w"), runtime.SetOptions{})
	if !errors.Is(err, runtime.ErrPersistence) {
		t.Fatalf("SET without an etcd quorum: %v, want ErrPersistence", err)
	}
}

// An endpoint that was down when the node opened and comes up as a
// member of another cluster stops the node with ErrMixedClusters, instead
// of leaving a second store with a leader of its own possible.
func TestNodeStopsWhenAnEndpointComesUpInAnotherCluster(t *testing.T) {
	old := clusterRecheck
	clusterRecheck = 200 * time.Millisecond
	t.Cleanup(func() { clusterRecheck = old })
	one, other := etcdtest.Start(t, 1), etcdtest.Start(t, 1)
	other.Kill(0)
	b := brokertest.Start(t)
	a := startNode(t, one, b.URL(), "a", func(cfg *Config) {
		cfg.Endpoints = append(one.Endpoints(), other.Endpoints()...)
	})
	a.waitLeader(t)
	other.Restart(0)
	select {
	case err := <-a.done:
		a.done <- nil // for the cleanup's stop
		if !errors.Is(err, ErrMixedClusters) {
			t.Fatalf("Run = %v, want ErrMixedClusters", err)
		}
	case <-time.After(bound):
		t.Fatal("node still running with endpoints of two clusters")
	}
}
