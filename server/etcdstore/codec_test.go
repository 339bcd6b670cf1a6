package etcdstore

import (
	"bytes"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
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
	del := func(k string) engine.Change { return engine.Change{Record: engine.Record{Key: k}, Delete: true} }
	watch := func(c, k string) engine.Change { return engine.Change{Record: engine.Record{Key: k}, Watch: c} }
	drop := func(c string) engine.Change { return engine.Change{Watch: c, Delete: true} }
	many := make([]engine.Change, 300)
	for i := range many {
		many[i] = put(string(rune('a'+i%26)) + string(rune(i)))
	}
	for _, tc := range []struct {
		name    string
		changes []engine.Change
		sizes   []int
	}{
		{"one", []engine.Change{put("a")}, []int{1}},
		{"a key written twice is one operation", []engine.Change{put("a"), put("b"), del("a")}, []int{2}},
		{"over MaxTxnOps splits", many, []int{MaxTxnOps, MaxTxnOps, 300 - 2*MaxTxnOps}},
		{"a client drop covers its earlier registrations", []engine.Change{watch("c", "x"), watch("c", "y"), watch("d", "x"), drop("c")}, []int{2}},
		{"a registration after its client's drop starts a transaction", []engine.Change{watch("c", "x"), drop("c"), watch("c", "y")}, []int{1, 1}},
		{"two drops of one client are one", []engine.Change{drop("c"), drop("c")}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			segs := l.segments(tc.changes)
			var sizes []int
			for _, s := range segs {
				sizes = append(sizes, len(s))
			}
			if len(sizes) != len(tc.sizes) {
				t.Fatalf("segments of sizes %v, want %v", sizes, tc.sizes)
			}
			for i := range sizes {
				if sizes[i] != tc.sizes[i] {
					t.Fatalf("segments of sizes %v, want %v", sizes, tc.sizes)
				}
			}
		})
	}
}
