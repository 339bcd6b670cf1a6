package engine

import (
	"bytes"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// seedForExport fills h with one key of each kind: plain, fenced,
// expiring, durable-flagged, binary.
func seedForExport(h *harness) {
	h.t.Helper()
	h.run(step{args: args("SET plain v1"), want: ok, wantTS: true})
	h.run(step{args: args("SET fenced v2"), ft: tsAt(-time.Second, 3, "locker"), want: ok, wantTS: true})
	h.run(step{args: args("SET ttl v3 PX 30000"), want: ok, wantTS: true})
	h.persisted(step{args: args("SET kept v4"), want: ok, wantTS: true})
	h.run(step{args: []string{"SET", "bin\x00\xff", "\x01\x02"}, want: ok, wantTS: true})
}

func TestExportHoldsEveryKeyWithItsMetadataInKeyOrder(t *testing.T) {
	h, _ := newPersistHarness(t, false)
	seedForExport(h)
	h.clock.Advance(10 * time.Second)
	h.run(step{args: args("SET gone x PX 1000"), want: ok, wantTS: true})
	h.clock.Advance(2 * time.Second) // gone expires; ttl has 18 s left

	s := h.eng.Export(nil)
	if !s.Taken.Equal(h.clock.Now()) {
		t.Errorf("Taken %v, want %v", s.Taken, h.clock.Now())
	}
	if s.Clock != h.eng.clock.Last() || s.Clock.IsZero() {
		t.Errorf("Clock %v, want the engine clock's last value %v", s.Clock, h.eng.clock.Last())
	}
	var keys []string
	for _, it := range s.Items {
		keys = append(keys, it.Key)
		e, ok := h.eng.Lookup([]byte(it.Key))
		if !ok {
			t.Fatalf("exported %q is not stored", it.Key)
		}
		if string(it.Value) != string(e.Value) || it.Version != e.Version || it.Fence != e.FencingToken {
			t.Errorf("%q: exported %+v, stored %+v", it.Key, it, e)
		}
		if it.Version.Compare(s.Clock) > 0 {
			t.Errorf("%q: version %v after the clock %v", it.Key, it.Version, s.Clock)
		}
	}
	want := []string{"bin\x00\xff", "fenced", "kept", "plain", "ttl"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	byKey := map[string]Item{}
	for _, it := range s.Items {
		byKey[it.Key] = it
	}
	if got := byKey["ttl"].TTL; got != 18*time.Second {
		t.Errorf("ttl left %v, want 18s", got)
	}
	if byKey["plain"].TTL != 0 || !byKey["kept"].Persist || byKey["plain"].Persist {
		t.Errorf("plain %+v, kept %+v", byKey["plain"], byKey["kept"])
	}
	if byKey["fenced"].Fence != mustParse(t, tsAt(-time.Second, 3, "locker")) {
		t.Errorf("fence %v", byKey["fenced"].Fence)
	}
}

func TestExportVisibleFilters(t *testing.T) {
	h := newHarness(t, Config{})
	seedForExport(h)
	s := h.eng.Export(func(k []byte) bool { return strings.HasPrefix(string(k), "f") || string(k) == "ttl" })
	if len(s.Items) != 2 || s.Items[0].Key != "fenced" || s.Items[1].Key != "ttl" {
		t.Fatalf("items %+v", s.Items)
	}
}

// TestImportRoundTrip exports a store and imports it into a fresh engine
// whose clock is elsewhere: every record is identical, the deadline is the
// same distance ahead, and later versions sort after the snapshot's clock.
func TestImportRoundTrip(t *testing.T) {
	src, _ := newPersistHarness(t, false)
	seedForExport(src)
	src.clock.Advance(5 * time.Second)
	s := src.eng.Export(nil)

	dst := newHarness(t, Config{})
	dst.clock.Set(t0.Add(-30 * time.Second)) // behind, within the window: versions must still sort after
	res, err := dst.eng.Import(s, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 5 || res.Deleted != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, it := range s.Items {
		e, ok := dst.eng.Lookup([]byte(it.Key))
		if !ok {
			t.Fatalf("%q missing after import", it.Key)
		}
		if string(e.Value) != string(it.Value) || e.Version != it.Version || e.FencingToken != it.Fence {
			t.Errorf("%q: imported %+v, want %+v", it.Key, e, it)
		}
		wantDeadline := time.Time{}
		if it.TTL > 0 {
			wantDeadline = dst.clock.Now().Add(it.TTL)
		}
		if !e.Deadline.Equal(wantDeadline) {
			t.Errorf("%q: deadline %v, want %v", it.Key, e.Deadline, wantDeadline)
		}
	}
	again := dst.eng.Export(nil)
	for i := range again.Items {
		a, b := again.Items[i], s.Items[i]
		b.Persist = false // dst has no Persist: nothing is durable there
		if !reflect.DeepEqual(a, b) {
			t.Errorf("re-export %+v, want %+v", a, b)
		}
	}
	// A write after the import gets a version after the snapshot's clock.
	res2 := dst.do(step{args: args("SET plain v9"), ts: tsAt(-30*time.Second, 0, "c")})
	if res2.Version.Compare(s.Clock) <= 0 {
		t.Fatalf("new version %v not after the snapshot clock %v", res2.Version, s.Clock)
	}
	// And the TTL runs from the import.
	dst.clock.Advance(24 * time.Second)
	if _, ok := dst.eng.Lookup([]byte("ttl")); !ok {
		t.Fatal("ttl expired early")
	}
	dst.clock.Advance(time.Second)
	if _, ok := dst.eng.Lookup([]byte("ttl")); ok {
		t.Fatal("ttl did not expire 25 s after the import")
	}
}

func TestImportModes(t *testing.T) {
	snap := Snapshot{Items: []Item{
		{Key: "a", Value: []byte("new-a"), Version: mustParse(t, tsAt(-time.Minute, 0, "old"))},
		{Key: "c", Value: []byte("new-c")},
	}}
	for _, tc := range []struct {
		mode    ImportMode
		err     error
		want    map[string]string
		deleted int
	}{
		{ImportEmpty, ErrNotEmpty, map[string]string{"a": "old-a", "b": "old-b"}, 0},
		{ImportMerge, nil, map[string]string{"a": "new-a", "b": "old-b", "c": "new-c"}, 0},
		{ImportReplace, nil, map[string]string{"a": "new-a", "c": "new-c"}, 1},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			h := newHarness(t, Config{})
			h.do(step{args: args("SET a old-a")})
			h.do(step{args: args("SET b old-b")})
			res, err := h.eng.Import(snap, ImportOptions{Mode: tc.mode})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			got := map[string]string{}
			for _, k := range h.eng.Keys() {
				e, _ := h.eng.Lookup([]byte(k))
				got[k] = string(e.Value)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("store %v, want %v", got, tc.want)
			}
			if res.Deleted != tc.deleted {
				t.Fatalf("deleted %d, want %d", res.Deleted, tc.deleted)
			}
			if err == nil {
				e, _ := h.eng.Lookup([]byte("a"))
				if e.Version != snap.Items[0].Version {
					t.Errorf("a's version %v, want the snapshot's %v", e.Version, snap.Items[0].Version)
				}
				c, _ := h.eng.Lookup([]byte("c"))
				if c.Version.Compare(e.Version) <= 0 || c.Version.Node != "StateStore" {
					t.Errorf("c without a version got %v, want a fresh tick", c.Version)
				}
			}
		})
	}
}

func TestImportNotifiesWithAFreshVersion(t *testing.T) {
	h := newHarness(t, Config{})
	h.do(step{args: args("SET a 1")})
	h.do(step{args: args("SET b 1")})
	h.do(step{client: "w", args: args("KEYNOTIFY a")})
	h.do(step{client: "w", args: args("KEYNOTIFY b")})
	h.do(step{client: "w", args: args("KEYNOTIFY c")})
	before := h.eng.clock.Last()
	h.takeNotes()
	old := mustParse(t, tsAt(-time.Hour, 0, "old"))
	_, err := h.eng.Import(Snapshot{Items: []Item{{Key: "a", Value: []byte("2"), Version: old}, {Key: "c", Value: []byte("3"), Version: old}}}, ImportOptions{Mode: ImportReplace})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range h.takeNotes() {
		got = append(got, string(n.Key)+" "+strings.TrimSpace(strings.ReplaceAll(string(n.Payload), "\r\n", " ")))
		if n.Version.Compare(before) <= 0 {
			t.Errorf("notification of %q stamped %v, not after %v", n.Key, n.Version, before)
		}
	}
	want := []string{"b *2 $6 NOTIFY $6 DELETE", "a *4 $6 NOTIFY $3 SET $5 VALUE $1 2", "c *4 $6 NOTIFY $3 SET $5 VALUE $1 3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notifications %q, want %q", got, want)
	}
}

func TestImportRefusesABadSnapshotChangingNothing(t *testing.T) {
	ahead := hlc.HLC{Wall: uint64(t0.Add(56 * time.Second).UnixMilli()), Node: "x"}
	edge := hlc.HLC{Wall: uint64(t0.Add(55 * time.Second).UnixMilli()), Node: "x"}
	good := Item{Key: "ok", Value: []byte("v")}
	cases := []struct {
		name  string
		cfg   Config
		snap  Snapshot
		mode  ImportMode
		is    error  // errors.Is
		index int    // the ItemError's index; -1: none expected
		text  string // in the message
	}{
		{"empty key", Config{}, Snapshot{Items: []Item{good, {Value: []byte("v")}}}, ImportMerge, ErrKeyLengthZero, 1, "keys[1]: the key length is zero"},
		{"duplicate", Config{}, Snapshot{Items: []Item{good, {Key: "x"}, {Key: "ok"}}}, ImportMerge, nil, 2, `keys[2] (key "ok"): the same key as keys[0]`},
		{"negative ttl", Config{}, Snapshot{Items: []Item{{Key: "k", TTL: -time.Second}}}, ImportMerge, nil, 0, "negative ttl"},
		{"key limit", Config{MaxKeyBytes: 3}, Snapshot{Items: []Item{good, {Key: "long"}}}, ImportMerge, ErrQuotaExceeded, 1, "the key is 4 bytes, over the server's limit of 3"},
		{"value limit", Config{MaxValueBytes: 1}, Snapshot{Items: []Item{{Key: "k", Value: []byte("vv")}}}, ImportMerge, ErrQuotaExceeded, 0, "the value is 2 bytes"},
		{"version ahead", Config{}, Snapshot{Items: []Item{good, {Key: "k", Version: ahead}}}, ImportMerge, nil, 1, "version " + ahead.String() + " is 56s ahead"},
		{"fence ahead", Config{}, Snapshot{Items: []Item{{Key: "k", Version: edge, Fence: ahead}}}, ImportMerge, nil, 0, "fencing token"},
		{"clock ahead", Config{}, Snapshot{Clock: ahead, Items: []Item{good}}, ImportMerge, nil, -1, "the snapshot clock"},
		{"not writable", Config{}, Snapshot{Items: []Item{good, {Key: "secret"}}}, ImportMerge, ErrNotAuthorized, 1, "not authorized"},
		{"replace deletes unwritable", Config{}, Snapshot{Items: []Item{good}}, ImportReplace, ErrNotAuthorized, -1, `replace would delete key "secret0"`},
		{"not empty", Config{}, Snapshot{Items: []Item{good}}, ImportEmpty, ErrNotEmpty, -1, "not empty"},
		{"max keys", Config{MaxKeys: 2}, Snapshot{Items: []Item{good, {Key: "k2"}}}, ImportMerge, ErrQuotaExceeded, -1, "3 keys, over the server's quota of 2"},
		{"max bytes", Config{MaxBytes: 20}, Snapshot{Items: []Item{{Key: "k", Value: []byte("01234567890")}}}, ImportMerge, ErrQuotaExceeded, -1, "21 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			h.do(step{args: args("SET secret0 zz")}) // 9 bytes
			h.do(step{client: "w", args: args("KEYNOTIFY ok")})
			h.takeNotes()
			before := h.eng.Export(nil)
			clock := h.eng.clock.Last()
			_, err := h.eng.Import(tc.snap, ImportOptions{Mode: tc.mode, Writable: func(k []byte) bool { return !strings.HasPrefix(string(k), "secret") }})
			if err == nil {
				t.Fatal("imported")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err %v, want errors.Is %v", err, tc.is)
			}
			var ie *ItemError
			if got := errors.As(err, &ie); got != (tc.index >= 0) || got && ie.Index != tc.index {
				t.Errorf("err %v (%T): want item %d", err, err, tc.index)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("err %q, want it to contain %q", err, tc.text)
			}
			if after := h.eng.Export(nil); !reflect.DeepEqual(after, before) {
				t.Errorf("store changed: %+v, was %+v", after, before)
			}
			if h.eng.clock.Last() != clock || len(h.takeNotes()) != 0 {
				t.Error("clock moved or watchers notified")
			}
		})
	}
	// At the edge of the window, stamps are accepted.
	h := newHarness(t, Config{})
	if _, err := h.eng.Import(Snapshot{Clock: edge, Items: []Item{{Key: "k", Version: edge, Fence: edge}}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestImportPersistsInOneCallAndNothingWhenItFails(t *testing.T) {
	h, j := newPersistHarness(t, false)
	h.persisted(step{args: args("SET kept 1")})
	h.persisted(step{args: args("SET gone 1")})
	h.do(step{args: args("SET volatile 1")})
	j.summary()
	snap := Snapshot{Items: []Item{
		{Key: "kept", Value: []byte("2")},               // made volatile: its record goes
		{Key: "new", Value: []byte("3"), Persist: true}, // put
		{Key: "volatile", Value: []byte("4")},           // stays volatile: nothing
		{Key: "ttl", Value: []byte("5"), Persist: true, TTL: time.Minute},
	}}
	j.fail = true
	if _, err := h.eng.Import(snap, ImportOptions{Mode: ImportReplace}); !errors.Is(err, ErrPersistence) {
		t.Fatalf("err %v, want ErrPersistence", err)
	}
	if e, _ := h.eng.Lookup([]byte("kept")); string(e.Value) != "1" {
		t.Fatal("a failed import changed memory")
	}
	j.fail = false
	if _, err := h.eng.Import(snap, ImportOptions{Mode: ImportReplace}); err != nil {
		t.Fatal(err)
	}
	if len(j.calls) != 1 {
		t.Fatalf("%d persist calls, want 1", len(j.calls))
	}
	for _, c := range j.calls[0] {
		if c.Key == "ttl" && !c.Deadline.Equal(h.clock.Now().Add(time.Minute)) {
			t.Errorf("ttl record deadline %v", c.Deadline)
		}
	}
	want := []string{"del gone", "del kept", "put new=3", "put ttl=5"}
	if got := j.summary(); !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	// The durability marks follow: a later DEL of new is persisted.
	h.do(step{args: args("DEL new")})
	if got := j.summary(); !reflect.DeepEqual(got, []string{"del new"}) {
		t.Fatalf("changes %q", got)
	}
}

func TestImportModeNames(t *testing.T) {
	for _, m := range []ImportMode{ImportEmpty, ImportMerge, ImportReplace} {
		got, err := ParseImportMode(m.String())
		if err != nil || got != m {
			t.Errorf("%v: %v %v", m, got, err)
		}
	}
	if _, err := ParseImportMode("Merge"); err == nil {
		t.Error("Merge parsed")
	}
}

func TestDisplayKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a/b", `"a/b"`},
		{"tab\there", `"tab\there"`},
		{"\x00\x01", "base64:AAE="},
		{"\xff", "base64:/w=="},
		{strings.Repeat("é", 150), `"` + strings.Repeat("é", 100) + `"... (300 bytes)`},
		{"a" + strings.Repeat("é", 150), `"a` + strings.Repeat("é", 99) + `"... (301 bytes)`}, // not cut inside a character
		{strings.Repeat("\xff", 300), "base64:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, 200)) + "... (300 bytes)"},
	} {
		if got := DisplayKey([]byte(tc.in)); got != tc.want {
			t.Errorf("DisplayKey(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
