package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/snapshot"
)

// seedOverMQTT writes keys of every kind through real requests: plain,
// fenced, expiring, kept (aio-persistence), binary.
func seedOverMQTT(t *testing.T, e *env) {
	t.Helper()
	c := e.connect("seeder")
	checkResponse(t, c.do("SET", "plain", "v1"), "+OK\r\n", true)
	checkResponse(t, c.roundTrip(request{payload: cmd("SET", "fenced", "v2"), ft: e.stamp(-time.Second)}), "+OK\r\n", true)
	checkResponse(t, c.do("SET", "ttl", "v3", "PX", "30000"), "+OK\r\n", true)
	kept := paho.UserProperties{{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "1.0"}, {Key: "__ts", Value: e.stamp(0)}, {Key: "aio-persistence", Value: "true"}}
	checkResponse(t, c.roundTrip(request{payload: cmd("SET", "kept", "v4"), user: kept}), "+OK\r\n", true)
	checkResponse(t, c.do("SET", "bin\x00\xff", "\x01\x02\xfe"), "+OK\r\n", true)
	checkResponse(t, c.do("SET", "html", "<script>&</script>"), "+OK\r\n", true)
}

// snapshotServer serves srv's snapshot handler on a loopback httptest
// server.
func snapshotServer(t *testing.T, srv *server.Server, o server.SnapshotHTTP) *httptest.Server {
	hs := httptest.NewServer(srv.SnapshotHandler(o))
	t.Cleanup(hs.Close)
	return hs
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func post(t *testing.T, url, contentType string, body []byte) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestSnapshotRoundTripOverHTTP exports a server written to over MQTT and
// imports the file into a fresh server on another clock, both through the
// HTTP handler: every record is identical, deadlines are the same
// distance ahead of each server's clock, and the new server's versions
// sort after the old one's.
func TestSnapshotRoundTripOverHTTP(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, src *env) {
		seedOverMQTT(t, src)
		src.clock.Advance(4 * time.Second) // ttl has 26 s left
		resp, file := get(t, snapshotServer(t, src.srv, server.SnapshotHTTP{}).URL)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Cache-Control") != "no-store" ||
			!strings.HasPrefix(resp.Header.Get("Content-Disposition"), `attachment; filename="ssgen-snapshot-`) {
			t.Fatalf("export: %s %v", resp.Status, resp.Header)
		}

		dst := newEnv(t, "", nil)
		dst.clock.Set(src.clock.Now().Add(-20 * time.Second)) // behind, within the window
		w := dst.connect("watcher")
		checkResponse(t, w.do("KEYNOTIFY", "plain"), "+OK\r\n", true)
		w.subscribeNotify()
		presp, body := post(t, snapshotServer(t, dst.srv, server.SnapshotHTTP{}).URL, "application/json", file)
		if presp.StatusCode != 200 || strings.TrimSpace(body) != `{"mode":"empty","stored":6,"deleted":0}` {
			t.Fatalf("import: %s %s", presp.Status, body)
		}
		keys := src.srv.Engine().Keys()
		if got := dst.srv.Engine().Keys(); fmt.Sprint(got) != fmt.Sprint(keys) {
			t.Fatalf("keys %q, want %q", got, keys)
		}
		for _, k := range keys {
			a, _ := src.srv.Engine().Lookup([]byte(k))
			b, _ := dst.srv.Engine().Lookup([]byte(k))
			if !bytes.Equal(a.Value, b.Value) || a.Version != b.Version || a.FencingToken != b.FencingToken {
				t.Errorf("%q: imported %+v, exported %+v", k, b, a)
			}
			if a.Deadline.IsZero() != b.Deadline.IsZero() || a.Deadline.Sub(src.clock.Now()) != b.Deadline.Sub(dst.clock.Now()) {
				t.Errorf("%q: deadline %v after its clock, was %v", k, b.Deadline.Sub(dst.clock.Now()), a.Deadline.Sub(src.clock.Now()))
			}
		}
		// The watcher saw the import, stamped after everything before.
		n := w.notification()
		if string(n.Payload) != string(cmd("NOTIFY", "SET", "VALUE", "v1")) {
			t.Fatalf("notification %q", n.Payload)
		}
		// A write on the new server gets a version after the snapshot's.
		snap, err := snapshot.Read(bytes.NewReader(file), snapshot.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c := dst.connect("writer")
		ts := checkResponse(t, c.do("SET", "plain", "v9"), "+OK\r\n", true)
		if v, err := hlc.Parse(ts); err != nil || v.Compare(snap.Clock) <= 0 {
			t.Fatalf("new version %v not after the snapshot clock %v", v, snap.Clock)
		}
		// The fenced key still needs a token at least the exported one.
		checkResponse(t, c.do("SET", "fenced", "x"), "-ERR "+string(engine.ErrFencingTokenRequired)+"\r\n", false)
		// And the ttl runs from the import.
		dst.clock.Advance(26 * time.Second)
		dst.srv.Engine().Expire()
		if _, ok := dst.srv.Engine().Lookup([]byte("ttl")); ok {
			t.Fatal("ttl outlived its time left")
		}
	})
}

func TestSnapshotImportRefusalsChangeNothing(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){func(o *server.Options) { o.MaxKeys = 3 }})
	must(t, e.srv.Engine().Put([]byte("existing"), []byte("x"), engine.PutOptions{}))
	must(t, e.srv.Engine().Put([]byte("secret/a"), []byte("x"), engine.PutOptions{}))
	hs := snapshotServer(t, e.srv, server.SnapshotHTTP{
		MaxBodyBytes: 4096,
		Access: func(r *http.Request) (func([]byte) bool, func([]byte) bool) {
			return nil, func(k []byte) bool { return !bytes.HasPrefix(k, []byte("secret/")) }
		},
	})
	file := func(entries ...string) []byte {
		return []byte(`{"format":"ssgen-snapshot","version":1,"keys":[` + strings.Join(entries, ",") + `]}`)
	}
	ok := `{"key":"new","value":"v"}`
	before := e.srv.Engine().Export(nil)
	for _, tc := range []struct {
		name, query, ctype string
		body               []byte
		status             int
		want               string
	}{
		{"not empty", "", "application/json", file(ok), 409, "the store is not empty"},
		{"bad entry", "?mode=merge", "application/json", file(ok, `{"key":"b","value":"!","encoding":"base64"}`), 400, `invalid snapshot: keys[1] (key "b"): "value" is not standard padded base64`},
		{"duplicate", "?mode=merge", "application/json", file(ok, ok), 400, `invalid snapshot: keys[1] (key "new"): the same key as keys[0]`},
		{"syntax", "?mode=merge", "application/json", []byte(`{"format":`), 400, "invalid snapshot: the file ends early"},
		{"bad mode", "?mode=overwrite", "application/json", file(ok), 400, `import mode "overwrite": want empty, merge or replace`},
		{"content type", "?mode=merge", "text/plain", file(ok), 415, "Content-Type: application/json"},
		{"form", "?mode=merge", "application/x-www-form-urlencoded", []byte("a=b"), 415, "application/json"},
		{"too large", "?mode=merge", "application/json", file(`{"key":"big","value":"` + strings.Repeat("v", 5000) + `"}`), 413, "larger than this server accepts (4096 bytes)"},
		{"quota", "?mode=merge", "application/json", file(ok, `{"key":"k2","value":""}`), 507, "the store would hold 4 keys, over the server's quota of 3"},
		{"quota while reading", "?mode=merge", "application/json", file(ok, `{"key":"k2","value":""}`, `{"key":"k3","value":""}`, `{"key":"k4","value":""}`), 507, "more than 3 keys"},
		{"not writable", "?mode=merge", "application/json", file(ok, `{"key":"secret/b","value":""}`), 403, `keys[1] (key "secret/b"): not authorized`},
		{"replace deletes unwritable", "?mode=replace", "application/json", file(ok), 403, `replace would delete key "secret/a"`},
		// A clock or a version too far ahead is a problem of the file: 400,
		// not 500 (issue #25).
		{"clock ahead", "?mode=merge", "application/json", []byte(`{"format":"ssgen-snapshot","version":1,"clock":"999999999999999:00000:n","keys":[]}`), 400, "invalid snapshot: the snapshot clock 999999999999999:00000:n is"},
		{"version ahead", "?mode=merge", "application/json", file(`{"key":"new","value":"v","version":"999999999999999:00000:n"}`), 400, `invalid snapshot: keys[0] (key "new"): version 999999999999999:00000:n is`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, hs.URL+tc.query, tc.ctype, tc.body)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("%s %q, want %d with %q", resp.Status, body, tc.status, tc.want)
			}
			if strings.Count(body, "\n") != 1 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("not one line of text: %q %v", body, resp.Header)
			}
			if after := e.srv.Engine().Export(nil); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the store changed:\n%+v\nwas\n%+v", after, before)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Fatalf("DELETE: %s %v", resp.Status, resp.Header)
	}
}

func TestSnapshotExportHoldsOnlyReadableKeys(t *testing.T) {
	e := newEnv(t, "", nil)
	for _, k := range []string{"public/a", "secret/b", "public/c"} {
		must(t, e.srv.Engine().Put([]byte(k), []byte("x"), engine.PutOptions{}))
	}
	hs := snapshotServer(t, e.srv, server.SnapshotHTTP{Access: func(r *http.Request) (func([]byte) bool, func([]byte) bool) {
		return func(k []byte) bool { return bytes.HasPrefix(k, []byte("public/")) }, nil
	}})
	_, file := get(t, hs.URL)
	s, err := snapshot.Read(bytes.NewReader(file), snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 2 || s.Items[0].Key != "public/a" || s.Items[1].Key != "public/c" {
		t.Fatalf("exported %+v", s.Items)
	}
}

// TestSnapshotBodyLimitFollowsTheQuotas: without quotas an upload is
// bounded by DefaultMaxSnapshotBody; with --max-bytes by the largest file
// a snapshot within the quotas can be (issue #25), and a larger body is
// refused with 413 after reading that much.
func TestSnapshotBodyLimitFollowsTheQuotas(t *testing.T) {
	for _, tc := range []struct {
		keys  int
		bytes int64
		want  int64
	}{
		{0, 0, server.DefaultMaxSnapshotBody},
		{1000, 0, server.DefaultMaxSnapshotBody},
		{10, 1000, 1<<20 + 10<<10 + 6000},
		{0, 1000, 1<<20 + 1000<<10 + 6000},
		{0, 1 << 62, 1 << 50},
	} {
		srv, err := server.New(server.Options{Listen: "127.0.0.1:0", MaxKeys: tc.keys, MaxBytes: tc.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.MaxSnapshotBody(); got != tc.want {
			t.Errorf("MaxKeys %d MaxBytes %d: limit %d, want %d", tc.keys, tc.bytes, got, tc.want)
		}
		_ = srv.Close()
	}
	e := newEnv(t, "", []func(*server.Options){func(o *server.Options) { o.MaxKeys, o.MaxBytes = 10, 1000 }})
	hs := snapshotServer(t, e.srv, server.SnapshotHTTP{})
	limit := e.srv.MaxSnapshotBody()
	body := append([]byte(`{"format":"ssgen-snapshot","version":1,"keys":[]}`), bytes.Repeat([]byte(" "), int(limit))...)
	resp, msg := post(t, hs.URL+"?mode=merge", "application/json", body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(msg, fmt.Sprint(limit)) {
		t.Fatalf("%s %q", resp.Status, msg)
	}
}

// TestSnapshotReplaceNeverNamesAHiddenKey reproduces issue #25: a replace
// refused because it would delete a key the caller may not write named
// that key even when the caller may not read it either.
func TestSnapshotReplaceNeverNamesAHiddenKey(t *testing.T) {
	e := newEnv(t, "", nil)
	for _, k := range []string{"public/a", "secret/hidden-name"} {
		must(t, e.srv.Engine().Put([]byte(k), []byte("x"), engine.PutOptions{}))
	}
	public := func(k []byte) bool { return bytes.HasPrefix(k, []byte("public/")) }
	hs := snapshotServer(t, e.srv, server.SnapshotHTTP{Access: func(r *http.Request) (func([]byte) bool, func([]byte) bool) {
		return public, public
	}})
	resp, body := post(t, hs.URL+"?mode=replace", "application/json", []byte(`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"public/a","value":"y"}]}`))
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "secret") || !strings.Contains(body, "may not read or write") {
		t.Fatalf("%s %q", resp.Status, body)
	}
}

// TestSnapshotWhileServing takes snapshots while a client writes keys
// k0000, k0001, ... in order: each snapshot must hold a prefix of them (a
// state the store was in), never a later key without an earlier one.
func TestSnapshotWhileServing(t *testing.T) {
	e := newEnv(t, "", nil)
	c := e.connect("writer")
	const n = 300
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			c.send(request{payload: cmd("SET", fmt.Sprintf("k%04d", i), "v")})
			c.await()
		}
	}()
	snaps := 0
	for finished := false; !finished; snaps++ {
		select {
		case <-done:
			finished = true
		default:
		}
		var b bytes.Buffer
		if err := e.srv.WriteSnapshot(&b); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.Read(&b, snapshot.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range s.Items {
			if want := fmt.Sprintf("k%04d", i); it.Key != want {
				t.Fatalf("snapshot %d: keys[%d] is %q, want %q", snaps, i, it.Key, want)
			}
		}
		if finished && len(s.Items) != n {
			t.Fatalf("final snapshot holds %d keys, want %d", len(s.Items), n)
		}
	}
}

func TestReadSnapshotBeforeStartAndDurably(t *testing.T) {
	dir := t.TempDir()
	clock := engine.NewFakeClock(time.Now())
	file := `{"format":"ssgen-snapshot","version":1,"keys":[
	  {"key":"kept","value":"1","version":"` + stampAt(clock.Now(), -time.Minute) + `","ttl":"1h","persist":true},
	  {"key":"volatile","value":"2"}]}`
	open := func() *server.Server {
		srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Now: clock.Now, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := open()
	res, err := srv.ReadSnapshot(strings.NewReader(file), engine.ImportEmpty)
	if err != nil || res.Stored != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	want, _ := srv.Engine().Lookup([]byte("kept"))
	must(t, srv.Start())
	must(t, srv.Close())

	srv = open()
	defer srv.Close()
	got, ok := srv.Engine().Lookup([]byte("kept"))
	if !ok || got.Version != want.Version || !got.Deadline.Equal(want.Deadline) || string(got.Value) != "1" {
		t.Fatalf("after a restart: %+v %v, want %+v", got, ok, want)
	}
	if _, ok := srv.Engine().Lookup([]byte("volatile")); ok {
		t.Fatal("a volatile key survived the restart")
	}
	// A second seed into the restored store is refused.
	if _, err := srv.ReadSnapshot(strings.NewReader(file), engine.ImportEmpty); !errors.Is(err, engine.ErrNotEmpty) {
		t.Fatalf("err %v, want ErrNotEmpty", err)
	}
}

func stampAt(t time.Time, d time.Duration) string {
	return fmt.Sprintf("%d:0:StateStore", t.Add(d).UnixMilli())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// brokenWriter is a ResponseWriter whose connection fails after the
// headers and n bytes.
type brokenWriter struct {
	h http.Header
	n int
}

func (b *brokenWriter) Header() http.Header { return b.h }
func (b *brokenWriter) WriteHeader(int)     {}
func (b *brokenWriter) Write(p []byte) (int, error) {
	if len(p) > b.n {
		return 0, errors.New("connection reset")
	}
	b.n -= len(p)
	return len(p), nil
}

// TestSnapshotExportAbortsABrokenTransfer: once the status line is sent,
// a failing write aborts the response (http.ErrAbortHandler), so the
// client sees a broken transfer instead of a well-ended, truncated file.
func TestSnapshotExportAbortsABrokenTransfer(t *testing.T) {
	e := newEnv(t, "", nil)
	for i := 0; i < 2000; i++ {
		must(t, e.srv.Engine().Put([]byte(fmt.Sprintf("key/%04d", i)), bytes.Repeat([]byte("v"), 100), engine.PutOptions{}))
	}
	h := e.srv.SnapshotHandler(server.SnapshotHTTP{})
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", p)
		}
	}()
	h.ServeHTTP(&brokenWriter{h: http.Header{}, n: 1000}, httptest.NewRequest(http.MethodGet, "/", nil))
	t.Fatal("the export ended normally")
}
