package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/schemacheck"
	"github.com/ssgen/ssgen/server/servertest"
)

// End to end: ssgen set --raw of a misfit value to a server enforcing the
// schema is refused with the text naming the declaration and path.
func TestServeEnforceRefusesAMisfitSet(t *testing.T) {
	sc, err := schema.LoadFile(versionsSchema("v2"))
	if err != nil {
		t.Fatal(err)
	}
	url := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		o.Enforce, o.WriteCheck = server.EnforceRefuse, schemacheck.New(sc)
	})).URL()
	run(t, url, "set", "--raw", "versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"heat"}`).want(t, exitOK, nil)
	r := run(t, url, "set", "--raw", "versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"warm"}`)
	if r.code == exitOK || !strings.Contains(r.stderr, "schema violation: SetPointJSON .mode:") {
		t.Fatalf("misfit set: exit %d, stderr %q", r.code, r.stderr)
	}
	run(t, url, "set", "--raw", "undeclared", `x`).want(t, exitOK, nil)
}

func TestServeEnforceFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--enforce", "refuse"},
		{"serve", "--enforce", "maybe", "--schema", versionsSchema("v2")},
		{"serve", "--enforce", "warn", "--raw", "--schema", versionsSchema("v2")},
		{"bench", "--enforce", "refuse"},
		{"bench", "--enforce", "maybe"},
		{"bench", "--schema", versionsSchema("v2"), "--enforce", "refuse", "--broker", "mqtt://127.0.0.1:1"},
	} {
		if r := runIn(t, "", nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "--enforce") {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// ssgen serve --enforce warn applies a misfit SET and logs it with the
// declaration and path.
func TestServeEnforceWarnLogs(t *testing.T) {
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--schema", versionsSchema("v2"), "--enforce", "warn")
	if !sp.lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	url := sp.lines.Text()
	run(t, url, "set", "--raw", "versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"warm"}`).want(t, exitOK, nil)
	sp.stop()
	if s := sp.stderr.String(); !strings.Contains(s, "write does not fit the schema") || !strings.Contains(s, "declaration=SetPointJSON path=.mode") {
		t.Fatalf("log lacks the warning:\n%s", s)
	}
}

// ssgen bench --schema --enforce refuse checks the embedded server's
// SETs: a schema that declares the bench's keys as numbers makes its SETs
// fail.
func TestBenchEnforceChecksTheEmbeddedServer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bench.yaml")
	yaml := "version: 1\npackage: benchschema\nkeys:\n  Value:\n    path: \"ssgen-bench/{run}/{n}\"\n    params: {run: string, n: string}\n    type: int64\n    encoding: json\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, "", nil, "bench", "--clients", "1", "--in-flight", "1", "--requests", "50", "--warmup", "0", "--mix", "set=1", "--schema", file, "--enforce", "refuse")
	if r.code == exitOK || !strings.Contains(r.stdout+r.stderr, "schema violation: Value") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A real ssgen serve --enforce refuse checks transition rules: a raw write
// that changes an immutable field is refused naming the field path, and
// one that keeps the rules goes through.
func TestServeEnforceRefusesABrokenTransitionRule(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ssgen.yaml")
	src := "version: 1\npackage: p\ntypes:\n  Device:\n    fields:\n      serial: {type: string, immutable: true}\n      seq: {type: uint64, monotonic: increasing}\nkeys:\n  Device: {path: device, type: Device, encoding: json}\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--schema", file, "--enforce", "refuse")
	if !sp.lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	url := sp.lines.Text()
	run(t, url, "set", "--raw", "device", `{"serial":"A","seq":1}`).want(t, exitOK, nil)
	run(t, url, "set", "--raw", "device", `{"serial":"A","seq":2}`).want(t, exitOK, nil)
	r := run(t, url, "set", "--raw", "device", `{"serial":"A","seq":2}`)
	if r.code == exitOK || !strings.Contains(r.stderr, "schema violation: Device .seq: monotonic (increasing) field moved from 2 to 2") {
		t.Fatalf("broken rule: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, url, "set", "--raw", "device", `{"serial":"B","seq":3}`)
	if r.code == exitOK || !strings.Contains(r.stderr, `schema violation: Device .serial: immutable field changed from "A" to "B"`) {
		t.Fatalf("broken rule: exit %d, stderr %q", r.code, r.stderr)
	}
}
