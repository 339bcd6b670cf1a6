package etcdstore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestRecordRoundTrip(t *testing.T) {
	v := hlc.HLC{Wall: 1795800000000, Counter: 3, Node: "StateStore"}
	f := hlc.HLC{Wall: 1795800000001, Node: "locker"}
	for _, r := range []engine.Record{
		{Key: "plain", Value: []byte("v"), Version: v},
		{Key: "fenced", Value: []byte{0, 1, 2}, Version: v, Fence: f},
		{Key: "ttl", Value: nil, Version: v, Deadline: time.Unix(0, 1795800000123456789)},
		{Key: "\x00binary key\xff", Value: bytes.Repeat([]byte("x"), 1000), Version: v, Fence: f, Deadline: time.Unix(1795800001, 0)},
	} {
		got, err := decodeRecord(r.Key, encodeRecord(&r))
		if err != nil {
			t.Fatalf("%q: %v", r.Key, err)
		}
		if got.Key != r.Key || !bytes.Equal(got.Value, r.Value) || got.Version != r.Version || got.Fence != r.Fence || !got.Deadline.Equal(r.Deadline) {
			t.Fatalf("round trip of %+v = %+v", r, got)
		}
	}
}

func TestMalformedRecordsAreRefused(t *testing.T) {
	for _, b := range [][]byte{nil, {}, {2}, {recordFormat}, {recordFormat, 200}, {recordFormat, 3, 'a', 'b', 'c', 0}, {recordFormat, 0, 0}} {
		if _, err := decodeRecord("k", b); err == nil {
			t.Fatalf("decodeRecord(%q) accepted", b)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	v := hlc.HLC{Wall: 1795800000000, Node: "n"}
	f.Add(encodeRecord(&engine.Record{Key: "k", Value: []byte("v"), Version: v}))
	f.Add(encodeRecord(&engine.Record{Key: "k", Value: []byte("v"), Version: v, Fence: v, Deadline: time.Unix(5, 0)}))
	f.Add([]byte{recordFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord("k", b)
		if err != nil {
			return
		}
		again, err := decodeRecord("k", encodeRecord(&r))
		if err != nil || again.Version != r.Version || again.Fence != r.Fence || !bytes.Equal(again.Value, r.Value) || !again.Deadline.Equal(r.Deadline) {
			t.Fatalf("re-encoded %+v decodes as %+v, %v", r, again, err)
		}
	})
}

func TestWatchKeysKeepClientsApart(t *testing.T) {
	for _, c := range []struct{ client, key string }{{"a", "b"}, {"ab", ""}, {"", "ab"}, {"c\x00lient", "k\x00ey"}} {
		s := watchKey(c.client, c.key)[len(watchesDir):]
		client, key, ok := parseWatch(s)
		if !ok || client != c.client || key != c.key {
			t.Fatalf("parseWatch(watchKey(%q, %q)) = %q %q %v", c.client, c.key, client, key, ok)
		}
	}
	// Client "a"'s registrations are not under client "ab"'s prefix, nor
	// the other way round.
	if bytes.HasPrefix([]byte(watchKey("ab", "x")), []byte(watchClient("a"))) {
		t.Fatal("client a's prefix covers client ab's registrations")
	}
	if _, _, ok := parseWatch("\x05ab"); ok {
		t.Fatal("parseWatch accepted a client longer than the key")
	}
}

func TestSegmentsFitEtcdTransactions(t *testing.T) {
	l := &Leader{prefix: "/p/"}
	put := func(k string) engine.Change { return engine.Change{Record: engine.Record{Key: k, Value: []byte("v")}} }
	putN := func(k string, n int) engine.Change {
		return engine.Change{Record: engine.Record{Key: k, Value: make([]byte, n)}}
	}
	del := func(k string) engine.Change { return engine.Change{Record: engine.Record{Key: k}, Delete: true} }
	watch := func(c, k string) engine.Change { return engine.Change{Record: engine.Record{Key: k}, Watch: c} }
	drop := func(c string) engine.Change { return engine.Change{Watch: c, Delete: true} }
	many := make([]engine.Change, 300)
	for i := range many {
		many[i] = put(string(rune('a'+i%26)) + string(rune(i)))
	}
	// The takeover: 120 deletions of 32,000-byte keys (3.8 MB).
	long := make([]engine.Change, 120)
	for i := range long {
		long[i] = del(fmt.Sprintf("%03d", i) + strings.Repeat("k", 32000-3))
	}
	delSize := opSize(clientv3.OpDelete("/p/" + keysDir + long[0].Key))
	def := limitsFor("/p/", "/p/leader/694d9a4c2b3e1f07")
	perTxn := def.bytes / delSize
	if perTxn < 40 || 2*perTxn >= 120 {
		t.Fatalf("%d deletions of 32,000-byte keys per transaction: the case below wants three transactions", perTxn)
	}
	big := opSize(clientv3.OpPut("/p/"+keysDir+"a", string(encodeRecord(&engine.Record{Key: "a", Value: make([]byte, 100)}))))
	ops := func(n int) txnLimits { return txnLimits{ops: n, bytes: 1 << 30} }
	for _, tc := range []struct {
		name    string
		lim     txnLimits
		changes []engine.Change
		sizes   []int // operations per transaction
	}{
		{"one", ops(MaxTxnOps), []engine.Change{put("a")}, []int{1}},
		{"a key written twice is one operation", ops(MaxTxnOps), []engine.Change{put("a"), put("b"), del("a")}, []int{2}},
		{"over MaxTxnOps splits", ops(MaxTxnOps), many, []int{MaxTxnOps, MaxTxnOps, 300 - 2*MaxTxnOps}},
		{"a client drop covers its earlier registrations", ops(MaxTxnOps), []engine.Change{watch("c", "x"), watch("c", "y"), watch("d", "x"), drop("c")}, []int{2}},
		{"a registration after its client's drop starts a transaction", ops(MaxTxnOps), []engine.Change{watch("c", "x"), drop("c"), watch("c", "y")}, []int{1, 1}},
		{"two drops of one client are one", ops(MaxTxnOps), []engine.Change{drop("c"), drop("c")}, []int{1}},
		{"long keys split by bytes under the default limits", def, long, []int{perTxn, perTxn, 120 - 2*perTxn}},
		{"exactly at the byte limit", txnLimits{ops: 10, bytes: 2 * big}, []engine.Change{putN("a", 100), putN("b", 100), putN("c", 100)}, []int{2, 1}},
		{"one byte under it", txnLimits{ops: 10, bytes: 2*big - 1}, []engine.Change{putN("a", 100), putN("b", 100), putN("c", 100)}, []int{1, 1, 1}},
		{"ops bound before bytes", txnLimits{ops: 2, bytes: 1 << 30}, []engine.Change{putN("a", 100), putN("b", 100), putN("c", 100)}, []int{2, 1}},
		{"a larger rewrite that does not fit in place goes next", txnLimits{ops: 10, bytes: 2 * big}, []engine.Change{putN("a", 100), putN("b", 100), putN("a", 101)}, []int{2, 1}},
		{"a smaller rewrite replaces in place", txnLimits{ops: 10, bytes: 2 * big}, []engine.Change{putN("a", 100), putN("b", 100), putN("a", 99)}, []int{2}},
		{"a drop's filtered registrations free their bytes", txnLimits{ops: 10, bytes: 3 * opSize(clientv3.OpPut("/p/"+watchKey("c", "x"), ""))}, []engine.Change{watch("c", "x"), watch("c", "y"), watch("c", "z"), drop("c"), watch("d", "x")}, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			segs, err := l.segments(tc.changes, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, s := range segs {
				sizes = append(sizes, len(s))
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Fatalf("segments of sizes %v, want %v", sizes, tc.sizes)
			}
			checkSegments(t, l, tc.changes, segs, tc.lim)
		})
	}
}

// checkSegments fails unless every transaction of segs is within lim and
// one etcd takes (no key twice, no operation inside a range deleted in the
// same transaction), and applying them in order leaves etcd as applying
// changes one by one would.
func checkSegments(t *testing.T, l *Leader, changes []engine.Change, segs [][]clientv3.Op, lim txnLimits) {
	t.Helper()
	want, got := map[string]string{}, map[string]string{}
	apply := func(m map[string]string, op clientv3.Op) {
		k := string(op.KeyBytes())
		switch {
		case op.IsPut():
			m[k] = string(op.ValueBytes())
		case isRange(op):
			for key := range m {
				if key >= k && key < string(op.RangeBytes()) {
					delete(m, key)
				}
			}
		default:
			delete(m, k)
		}
	}
	for i := range changes {
		op, _ := l.op(&changes[i])
		apply(want, op)
	}
	for i, seg := range segs {
		bytes, seen := 0, map[string]bool{}
		var ranges []clientv3.Op
		for _, op := range seg {
			bytes += opSize(op)
			if isRange(op) {
				ranges = append(ranges, op)
				continue
			}
			if seen[string(op.KeyBytes())] {
				t.Fatalf("transaction %d writes %q twice", i, op.KeyBytes())
			}
			seen[string(op.KeyBytes())] = true
		}
		for _, r := range ranges {
			for k := range seen {
				if k >= string(r.KeyBytes()) && k < string(r.RangeBytes()) {
					t.Fatalf("transaction %d writes %q inside a range it deletes", i, k)
				}
			}
		}
		if len(seg) > lim.ops || bytes > lim.bytes {
			t.Fatalf("transaction %d: %d operations, %d bytes, over %d and %d", i, len(seg), bytes, lim.ops, lim.bytes)
		}
		for _, op := range seg {
			apply(got, op)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("etcd after the transactions: %d keys, want %d", len(got), len(want))
	}
}

// One change that alone does not fit a transaction is refused before
// anything is cut; a record of the longest key and value a client may
// send always fits, and the default bounds are within etcd's request
// limit and below the client's send limit.
func TestSegmentsBounds(t *testing.T) {
	l := &Leader{prefix: DefaultPrefix}
	lim := limitsFor(DefaultPrefix, DefaultPrefix+leaderDir+"/694d9a4c2b3e1f07")
	if _, err := l.segments([]engine.Change{{Record: engine.Record{Key: "huge", Value: make([]byte, maxRequest)}}}, lim); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("segments of a value of maxRequest bytes: %v, want ErrTooLarge", err)
	}
	longest := engine.Change{Record: engine.Record{
		Key:     strings.Repeat("k", MaxKeyBytes),
		Value:   make([]byte, MaxValueBytes),
		Version: hlc.HLC{Wall: 1 << 50, Counter: 1 << 16, Node: strings.Repeat("n", 64)},
		Fence:   hlc.HLC{Wall: 1 << 50, Counter: 1 << 16, Node: strings.Repeat("n", 64)},
	}}
	three := []engine.Change{longest, longest, longest}
	for i := range three {
		three[i].Key = fmt.Sprint(i) + longest.Key[1:]
	}
	segs, err := l.segments(three, lim)
	if err != nil || len(segs) != 3 {
		t.Fatalf("three records of the longest key and value: %d transactions, %v; want 3", len(segs), err)
	}
	if maxRequest > 3<<19 || maxRequest >= ClientSendBytes {
		t.Fatalf("maxRequest %d: over etcd's 1.5 MiB or the client's send limit %d", maxRequest, ClientSendBytes)
	}
}
