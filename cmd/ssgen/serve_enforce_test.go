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

// serve --enforce's check reads a value as the generated code would: any
// declared version of a versioned type fits, a misfit names the
// declaration and the field path, and undeclared keys and locks pass.
func TestWriteCheckReadsEveryDeclaredVersion(t *testing.T) {
	sc, err := schema.LoadFile(versionsSchema("v2"))
	if err != nil {
		t.Fatal(err)
	}
	check := schemacheck.New(sc)
	for _, c := range []struct {
		key, value string
		decl, path string // "" when it fits
	}{
		{"versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"heat"}`, "", ""},
		{"versions/setpoint-json", `{"$v":1,"fahrenheit":68,"mode":"cool"}`, "", ""},
		{"versions/setpoint-json", `{"fahrenheit":68,"mode":"cool"}`, "", ""}, // unstamped: the oldest version
		{"versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"warm"}`, "SetPointJSON", ".mode"},
		{"versions/setpoint-json", `{"$v":3,"kelvin":1}`, "SetPointJSON", ""},
		{"versions/setpoint-json", `not json`, "SetPointJSON", ""},
		{"versions/rooms/kitchen/target", `{"$v":2,"celsius":20,"mode":"heat"}`, "Room.Target", ""}, // JSON where MessagePack is declared
		{"versions/rooms/kitchen/owner", `anything`, "", ""},                                        // a lock
		{"undeclared/key", `anything`, "", ""},
		{"versions/\xff", `anything`, "", ""},
	} {
		p := check([]byte(c.key), []byte(c.value))
		switch {
		case c.decl == "" && p != nil:
			t.Errorf("%s %s: %+v, want it to fit", c.key, c.value, p)
		case c.decl != "" && p == nil:
			t.Errorf("%s %s: fits, want a misfit", c.key, c.value)
		case p != nil && (p.Declaration != c.decl || p.Path != c.path || p.Reason != "decode" || p.Msg == ""):
			t.Errorf("%s %s: %+v, want declaration %s path %q", c.key, c.value, p, c.decl, c.path)
		}
	}
}

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
