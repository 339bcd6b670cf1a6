package etcdstore

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func dialEtcd(t *testing.T, c *etcdtest.Cluster) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func putRecord(t *testing.T, cli *clientv3.Client, prefix, key, value string) {
	t.Helper()
	r := engine.Record{Key: key, Value: []byte(value), Version: hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "n"}}
	if _, err := cli.Put(context.Background(), prefix+keysDir+key, string(encodeRecord(&r))); err != nil {
		t.Fatal(err)
	}
}

// A new leader's catch-up finds every change made after the revision its
// state reflects: new, changed and deleted keys and registrations, a
// deleted key replaced by a new one (equal counts before and after), and
// nothing of other prefixes.
func TestCatchUpReadsEveryChangeSinceTheStatesRevision(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli := dialEtcd(t, c)
	ctx := context.Background()
	const p = "/catchup/"
	for _, k := range []string{"keep", "change", "drop", "swap"} {
		putRecord(t, cli, p, k, "old")
	}
	for _, w := range []string{watchKey("c1", "a"), watchKey("c1", "b"), watchKey("c2", "a")} {
		if _, err := cli.Put(ctx, p+w, ""); err != nil {
			t.Fatal(err)
		}
	}
	st, err := load(ctx, cli, p)
	if err != nil {
		t.Fatal(err)
	}
	putRecord(t, cli, p, "change", "new")
	putRecord(t, cli, p, "added", "new")
	putRecord(t, cli, "/other/", "elsewhere", "x")
	for _, k := range []string{"drop", "swap"} {
		if _, err := cli.Delete(ctx, p+keysDir+k); err != nil {
			t.Fatal(err)
		}
	}
	putRecord(t, cli, p, "swapped", "new")
	if _, err := cli.Delete(ctx, p+watchClient("c1"), clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, p+watchKey("c3", "z"), ""); err != nil {
		t.Fatal(err)
	}

	if err := catchUp(ctx, cli, p, st); err != nil {
		t.Fatal(err)
	}
	want, err := load(ctx, cli, p)
	if err != nil {
		t.Fatal(err)
	}
	if st.rev != want.rev {
		t.Fatalf("caught up to revision %d, etcd is at %d", st.rev, want.rev)
	}
	if !maps.EqualFunc(st.records, want.records, func(a, b engine.Record) bool { return string(a.Value) == string(b.Value) && a.Version == b.Version }) {
		t.Fatalf("records after catch-up %v, want %v", st.records, want.records)
	}
	if !maps.Equal(st.watches, want.watches) {
		t.Fatalf("registrations after catch-up %q, want %q", st.watches, want.watches)
	}
	if _, ok := st.records["elsewhere"]; ok {
		t.Fatal("catch-up read another prefix")
	}
}
