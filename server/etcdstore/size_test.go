package etcdstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// longKeys are n key names of 32,000 bytes (within MaxKeyBytes): n of
// them deleted in one transaction of MaxTxnOps operations would be 4 MiB
// for n ≥ 127, over etcd's request limit and the client's send limit.
func longKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%03d", i) + strings.Repeat("k", 32000-3)
	}
	return keys
}

// setWithTTL sets every key, kept, with a value and a TTL of 2 s.
func setWithTTL(t *testing.T, r *running, keys []string) {
	t.Helper()
	cl := clienttest.Dial(t, r.cfg.Server.Broker)
	ctx := clienttest.Context(t)
	for _, k := range keys {
		if _, err := cl.Set(ctx, []byte(k), []byte("v"), runtime.SetOptions{TTL: 2 * time.Second}); err != nil {
			t.Fatalf("SET of a %d-byte key: %v", len(k), err)
		}
	}
}

// keysInEtcd counts the records under the default prefix.
func keysInEtcd(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(clienttest.Context(t), DefaultPrefix+keysDir, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// The attack of the review: 120 kept keys with 32,000-byte names and a
// TTL of 2 s, then the leader killed. The standby that takes over finds
// them expired and deletes them in etcd: in transactions cut by bytes,
// not one of 120 deletions (3.8 MB, refused by the client), which made
// every standby fail to take over, for ever.
func TestStandbyTakesOverAfterManyLongKeysExpired(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	start := time.Now()
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) { cfg.Server.Clock = server.NewManualClock(start) })
	a.waitLeader(t)
	// The standby's clock is 10 s later: every key has expired when it
	// takes over.
	s := startNode(t, c, b.URL(), "s", func(cfg *Config) { cfg.Server.Clock = server.NewManualClock(start.Add(10 * time.Second)) })
	keys := longKeys(120)
	setWithTTL(t, a, keys)
	cli := dialEtcd(t, c)
	if n := keysInEtcd(t, cli); n != int64(len(keys)) {
		t.Fatalf("%d records in etcd, want %d", n, len(keys))
	}

	a.abort() // kill -9: no resignation
	srv := s.waitLeader(t)
	if n := keysInEtcd(t, cli); n != 0 {
		t.Fatalf("%d records in etcd after the takeover, want the expired ones deleted", n)
	}
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	if got, _, err := cl.Get(ctx, []byte(keys[0])); err == nil && got != nil {
		t.Fatalf("GET of an expired key after the takeover = %q", got)
	}
	if _, err := cl.Set(ctx, []byte("after"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatalf("SET after the takeover: %v", err)
	}
	if s.Server() != srv {
		t.Fatal("the new leader stepped down")
	}
}

// A leader in a normal run expires 120 keys with 32,000-byte names at
// once (one engine write of 120 deletions, 3.8 MB): it deletes them in
// etcd in several transactions and stays the leader.
func TestLeaderReapsManyLongKeysAtOnce(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) { cfg.Server.Clock = server.NewManualClock(time.Now()) })
	srv := a.waitLeader(t)
	keys := longKeys(120)
	setWithTTL(t, a, keys)
	cli := dialEtcd(t, c)
	if _, err := srv.AdvanceClock(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, bound, "the expired keys deleted in etcd", func() bool { return keysInEtcd(t, cli) == 0 })
	cl := clienttest.Dial(t, b.URL())
	if _, err := cl.Set(clienttest.Context(t), []byte("after"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatalf("SET after the expiry: %v", err)
	}
	if a.Server() != srv {
		t.Fatal("the leader stepped down")
	}
	if st := srv.Stats().Persist; st.Failures != 0 {
		t.Fatalf("%d transactions failed", st.Failures)
	}
}

// Records of the longest key and value a client may send, written
// together, each fit one of etcd's requests at its default limits: they
// are acknowledged and the leader stays.
func TestLargestRecordsFitEtcdRequests(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	srv := a.waitLeader(t)
	ctx := clienttest.Context(t)
	errs := make(chan error, 3)
	for i := range 3 {
		cl := clienttest.Dial(t, b.URL())
		key := fmt.Sprint(i) + strings.Repeat("k", MaxKeyBytes-1)
		go func() {
			_, err := cl.Set(ctx, []byte(key), make([]byte, MaxValueBytes), runtime.SetOptions{})
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("SET of a %d-byte key and a %d-byte value: %v", MaxKeyBytes, MaxValueBytes, err)
		}
	}
	if n := keysInEtcd(t, dialEtcd(t, c)); n != 3 {
		t.Fatalf("%d records in etcd, want 3", n)
	}
	if a.Server() != srv {
		t.Fatal("the leader stepped down")
	}
}
