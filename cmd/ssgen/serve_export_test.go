package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
	"github.com/ssgen/ssgen/server/snapshot"
)

// snapshotHTTP serves srv's snapshots where ssgen serve --http serves
// them and returns the base URL.
func snapshotHTTP(t *testing.T, srv *server.Server) string {
	mux := http.NewServeMux()
	mux.Handle(snapshotPath, srv.SnapshotHandler(server.SnapshotHTTP{}))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

// runVerb runs the CLI in-process and returns its exit code, stdout and
// stderr.
func runVerb(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runCLI(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func seedKeys(t *testing.T, srv *server.Server) {
	t.Helper()
	e := srv.Engine()
	fence := hlc.HLC{Wall: uint64(time.Now().Add(-time.Second).UnixMilli()), Node: "holder"}
	for _, p := range []struct {
		k, v string
		o    engine.PutOptions
	}{
		{"greeting", "hello", engine.PutOptions{}},
		{"lock", "holder", engine.PutOptions{FencingToken: fence, TTL: time.Minute}},
		{"bin\x00", "\xff\x00", engine.PutOptions{}},
	} {
		if err := e.Put([]byte(p.k), []byte(p.v), p.o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExportImportEndToEnd(t *testing.T) {
	src := servertest.New(t)
	seedKeys(t, src)
	file := filepath.Join(t.TempDir(), "snap.json")
	if code, out, errs := runVerb(t, "", "export", "--http", snapshotHTTP(t, src), "-o", file); code != 0 || out != "" {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
	dst := servertest.New(t)
	dstURL := snapshotHTTP(t, dst)
	code, out, errs := runVerb(t, "", "import", "--http", dstURL, file)
	if code != 0 || out != "stored 3 keys, deleted 0\n" {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	for _, k := range src.Engine().Keys() {
		a, _ := src.Engine().Lookup([]byte(k))
		b, ok := dst.Engine().Lookup([]byte(k))
		if !ok || !bytes.Equal(a.Value, b.Value) || a.Version != b.Version || a.FencingToken != b.FencingToken || a.Deadline.IsZero() != b.Deadline.IsZero() {
			t.Errorf("%q: %+v, want %+v", k, b, a)
		}
	}

	// Again: the store is no longer empty (exit 1); --replace from stdin
	// loads it; stdout export is the same file.
	code, _, errs = runVerb(t, "", "import", "--http", strings.TrimPrefix(dstURL, "http://"), file)
	if code != exitNegative || !strings.Contains(errs, "409 Conflict: the store is not empty: --merge") || strings.Contains(errs, "mode merge") {
		t.Fatalf("second import: %d %q", code, errs)
	}
	snap, _ := os.ReadFile(file)
	if code, out, errs := runVerb(t, string(snap), "import", "--replace", "--http", dstURL, "-"); code != 0 || out != "stored 3 keys, deleted 0\n" {
		t.Fatalf("--replace: %d %q %q", code, out, errs)
	}
	if code, out, _ := runVerb(t, "", "export", "--http", dstURL); code != 0 || !json.Valid([]byte(out)) || !strings.Contains(out, `"key":"greeting"`) {
		t.Fatalf("export to stdout: %d %q", code, out)
	}
}

func TestImportNamesTheBadEntryAndChangesNothing(t *testing.T) {
	srv := servertest.New(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"ssgen-snapshot","version":1,"keys":[
		{"key":"a","value":"1"},
		{"key":"b","value":"2","version":"yesterday"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runVerb(t, "", "import", "--http", snapshotHTTP(t, srv), bad)
	want := `ssgen import: ` + bad + `: 400 Bad Request: invalid snapshot: keys[1] (key "b"): "version" "yesterday": want an HLC`
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Fatalf("%d %q %q, want exit 2 and %q", code, out, errs, want)
	}
	if srv.Engine().Len() != 0 {
		t.Fatal("a refused import stored keys")
	}
}

func TestExportImportUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export"}, "want one of --http URL"},
		{[]string{"export", "--http", "h:1", "--data-dir", "d"}, "want one of --http URL"},
		{[]string{"export", "--http", "ftp://h"}, `--http "ftp://h": want http://HOST:PORT`},
		{[]string{"export", "--http", "h:1", "extra"}, `unexpected argument "extra"`},
		{[]string{"export", "--data-dir", "/nonexistent/dir"}, "/nonexistent/dir holds no state store (statestore.db)"},
		{[]string{"import", "f.json"}, "--http URL is required"},
		{[]string{"import", "--http", "h:1"}, "want one snapshot FILE"},
		{[]string{"import", "--http", "h:1", "--merge", "--replace", "f"}, "--merge and --replace exclude each other"},
		{[]string{"import", "--http", "h:1", "/nonexistent.json"}, "no such file"},
		{[]string{"import", "--http", refusedAddr(t), "-"}, "connect: connection refused; is ssgen serve running with --http"},
		{[]string{"export", "--http", strings.TrimPrefix(servertest.New(t).URL(), "mqtt://")}, "does not speak HTTP: if it is ssgen serve's MQTT port"},
	} {
		code, _, errs := runVerb(t, "{}", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestExportDataDir(t *testing.T) {
	dir := t.TempDir()
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	seedKeys(t, srv)
	// Held by a server: refused, pointing at --http.
	code, _, errs := runVerb(t, "", "export", "--data-dir", dir)
	if code != exitUsage || !strings.Contains(errs, "locked by another process") || !strings.Contains(errs, "use --http") {
		t.Fatalf("export of a held data dir: %d %q", code, errs)
	}
	want := srv.Engine().Export(nil)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runVerb(t, "", "export", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("export: %d %q", code, errs)
	}
	got, err := snapshot.Read(strings.NewReader(out), snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(want.Items) {
		t.Fatalf("exported %d keys, want %d", len(got.Items), len(want.Items))
	}
	for i, it := range got.Items {
		w := want.Items[i]
		if it.Key != w.Key || !bytes.Equal(it.Value, w.Value) || it.Version != w.Version || it.Fence != w.Fence || !it.Persist || (it.TTL > 0) != (w.TTL > 0) {
			t.Errorf("exported %+v, want %+v", it, w)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The CLI side of --seed: the server starts with the snapshot's keys.
func TestServeSeed(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(snap, []byte(`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"k","value":"seeded"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--seed", snap, "--log-format", "json")
	lines := sp.lines
	if !lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	host := strings.TrimPrefix(lines.Text(), "mqtt://")
	if got := serveRequest(t, host, resp3.AppendCommand(nil, []byte("GET"), []byte("k"))); got != "$6\r\nseeded\r\n" {
		t.Fatalf("GET k answered %q", got)
	}
	sp.stop()
	for _, l := range strings.Split(strings.TrimSpace(sp.stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == "" {
			t.Errorf("--log-format json wrote %q", l)
		}
	}
	if !strings.Contains(sp.stderr.String(), `"msg":"snapshot loaded","mode":"empty","keys":1`) {
		t.Errorf("no snapshot line in\n%s", sp.stderr)
	}
}

func TestServeSeedRefusals(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"","value":""}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"k","value":"v","persist":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ahead := filepath.Join(dir, "ahead.json")
	if err := os.WriteFile(ahead, []byte(`{"format":"ssgen-snapshot","version":1,"clock":"999999999999999:00000:n","keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	srv, err := server.New(server.Options{DataDir: data, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.ReadSnapshot(strings.NewReader(`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"old","value":"v","persist":true}]}`), engine.ImportEmpty); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seed", bad}, "--seed " + bad + ": invalid snapshot: keys[0]: the key length is zero"},
		{[]string{"--seed", ahead}, "--seed " + ahead + ": invalid snapshot: the snapshot clock 999999999999999:00000:n is"},
		{[]string{"--seed", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"--seed", good, "--data-dir", data}, "the data dir already holds 1 key, and --seed starts only an empty store"},
		{[]string{"--log-format", "xml"}, `--log-format "xml": want text or json`},
	} {
		code, _, errs := runVerb(t, "", append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestExportAuthenticates: --token and SSGEN_TOKEN are sent as a Bearer
// token, USER:PASSWORD@ in --http as HTTP Basic; a refusal names the
// server's status and reason.
func TestExportAuthenticates(t *testing.T) {
	srv := servertest.New(t)
	snap := srv.SnapshotHandler(server.SnapshotHTTP{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, basic := r.BasicAuth()
		if r.Header.Get("Authorization") != "Bearer s3cret" && !(basic && u == "alice" && p == "pw") {
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		snap.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	host := strings.TrimPrefix(hs.URL, "http://")
	// The refusals say which flag supplies what is missing, not which
	// HTTP header.
	if code, _, errs := runVerb(t, "", "export", "--http", hs.URL); code != exitUsage || !strings.Contains(errs, "401 Unauthorized: the server wants its access token: --token TOKEN or $SSGEN_TOKEN") {
		t.Fatalf("without credentials: %d %q", code, errs)
	}
	if code, _, errs := runVerb(t, "", "export", "--http", hs.URL, "--token", "nope"); code != exitUsage || !strings.Contains(errs, "refused the access token (--token") {
		t.Fatalf("a wrong token: %d %q", code, errs)
	}
	for _, args := range [][]string{
		{"--http", hs.URL, "--token", "s3cret"},
		{"--http", "http://alice:pw@" + host},
	} {
		if code, out, errs := runVerb(t, "", append([]string{"export"}, args...)...); code != 0 || !strings.Contains(out, `"format": "ssgen-snapshot"`) {
			t.Errorf("%q: %d %q", args, code, errs)
		}
	}
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string {
		if k == "SSGEN_TOKEN" {
			return "s3cret"
		}
		return ""
	}}
	if code := runCLI(context.Background(), env, []string{"export", "--http", hs.URL}); code != 0 {
		t.Errorf("SSGEN_TOKEN: %d %q", code, errb.String())
	}
	if code, _, errs := runVerb(t, "", "export", "--http", "http://alice:wrong@"+host); code != exitUsage || strings.Contains(errs, "wrong") {
		t.Errorf("a refused password: %d %q (the password must not be echoed)", code, errs)
	}
}

// export --data-dir only reads the directory: from what a kill -9 leaves
// (writes in the log, not yet in the data file) and from a data file of
// the previous format, it exports every kept key and leaves each file as
// it was (a start would replay the log, delete its segments and upgrade
// the format in place). A read-only directory exports too.
func TestExportDataDirOnlyReads(t *testing.T) {
	digest := func(dir string) map[string]string {
		t.Helper()
		m := map[string]string{}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return m
	}
	live := t.TempDir()
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: live, PersistAll: true, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	seedKeys(t, srv)
	crashed := t.TempDir() // the files as they are while the server runs
	ents, err := os.ReadDir(live)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") { // the next segment, being made
			continue
		}
		b, err := os.ReadFile(filepath.Join(live, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	old := t.TempDir()
	b, err := os.ReadFile("../../server/persist/testdata/statestore-format2.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, server.StoreFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"after a kill -9": crashed, "format 2": old} {
		before := digest(dir)
		if err := os.Chmod(dir, 0o500); err != nil { // read-only (root writes anyway)
			t.Fatal(err)
		}
		code, out, errs := runVerb(t, "", "export", "--data-dir", dir)
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if code != 0 || !strings.Contains(out, `"keys"`) {
			t.Fatalf("%s: export: %d %q %q", name, code, out, errs)
		}
		if name == "after a kill -9" && !strings.Contains(out, `"greeting"`) {
			t.Fatalf("%s: the log's writes are not exported: %s", name, out)
		}
		if after := digest(dir); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%s: export changed the directory:\n%v\n%v", name, before, after)
		}
	}
}
