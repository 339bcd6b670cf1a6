package etcdstore

import (
	"context"
	"fmt"
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

// putMany writes records p k/<name> for names, in transactions etcd takes.
func putMany(t *testing.T, cli *clientv3.Client, p string, names []string, value string) {
	t.Helper()
	for len(names) > 0 {
		n := min(len(names), MaxTxnOps)
		var ops []clientv3.Op
		for _, k := range names[:n] {
			r := engine.Record{Key: k, Value: []byte(value), Version: hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "n"}}
			ops = append(ops, clientv3.OpPut(p+keysDir+k, string(encodeRecord(&r))))
		}
		if _, err := cli.Txn(context.Background()).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
		names = names[n:]
	}
}

// Load and catch-up read by pages of loadPage keys: a store of several
// pages, then more than a page of changes and of deletions, are read
// whole, and nothing beyond the prefix.
func TestLoadAndCatchUpReadPageByPage(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli := dialEtcd(t, c)
	ctx := context.Background()
	const p = "/pages/"
	names := func(from, to int) []string {
		var s []string
		for i := from; i < to; i++ {
			s = append(s, fmt.Sprintf("key%05d", i))
		}
		return s
	}
	putMany(t, cli, p, names(0, 2*loadPage+10), "old")
	putRecord(t, cli, "/pages0/", "beyond", "x") // the next prefix, byte-wise
	st, err := load(ctx, cli, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.records) != 2*loadPage+10 {
		t.Fatalf("load read %d records, want %d", len(st.records), 2*loadPage+10)
	}
	// More than a page changed (some of them new), more than a page
	// deleted: the counts do not show how many.
	putMany(t, cli, p, names(loadPage/2, 2*loadPage+300), "new")
	if _, err := cli.Delete(ctx, p+keysDir+"key00000", clientv3.WithRange(p+keysDir+fmt.Sprintf("key%05d", loadPage+200))); err != nil {
		t.Fatal(err)
	}
	if err := catchUp(ctx, cli, p, st); err != nil {
		t.Fatal(err)
	}
	want, err := load(ctx, cli, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.records) != 2*loadPage+300-(loadPage+200) {
		t.Fatalf("etcd holds %d records", len(want.records))
	}
	if !maps.EqualFunc(st.records, want.records, func(a, b engine.Record) bool { return string(a.Value) == string(b.Value) && a.Version == b.Version }) {
		t.Fatalf("after catch-up %d records, want %d", len(st.records), len(want.records))
	}
}
