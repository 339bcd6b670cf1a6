package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/schema"
)

// schemaRun is what one in-process run of a schema verb printed.
type schemaRun struct {
	code           int
	stdout, stderr string
}

// runSchemaVerb runs ssgen in-process with args.
func runSchemaVerb(t *testing.T, args ...string) schemaRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runCLI(ctx, env, args)
	return schemaRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func (r schemaRun) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func thermostatSchema(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../schema/testdata/valid/thermostat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestSchemaVerbPrintsTheEmbeddedJSONSchema(t *testing.T) {
	r := runSchemaVerb(t, "schema")
	r.wantCode(t, exitOK)
	if r.stdout != string(schema.JSONSchema) {
		t.Fatal("stdout is not schema.JSONSchema")
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v["$id"] != schema.JSONSchemaURL {
		t.Fatalf("not the JSON Schema with $id %s: %v", schema.JSONSchemaURL, err)
	}
	out := filepath.Join(t.TempDir(), "ssgen.schema.json")
	runSchemaVerb(t, "schema", "-o", out).wantCode(t, exitOK)
	if got, _ := os.ReadFile(out); !bytes.Equal(got, schema.JSONSchema) {
		t.Fatal("-o did not write the JSON Schema")
	}
	runSchemaVerb(t, "schema", "extra").wantCode(t, exitUsage)
}

func TestSchemaErrorsArePrintedOnePerLineWithPositions(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "ssgen.yaml", "version: 2\npackage: p\nkeys:\n  A: {path: a, type: nope}\n")
	r := runSchemaVerb(t, "doc", f)
	r.wantCode(t, exitUsage)
	want := f + ":1:10: version 2 is not supported (this ssgen reads version: 1)\n" +
		f + ":4:22: key A: unknown type \"nope\"\n"
	if r.stderr != want || r.stdout != "" {
		t.Fatalf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
}

func TestHelpOfEachSchemaVerbSucceeds(t *testing.T) {
	for _, v := range []string{"schema", "doc", "breaking", "init"} {
		r := runSchemaVerb(t, v, "--help")
		r.wantCode(t, exitOK)
		if !strings.Contains(r.stderr, "usage: ssgen "+v) {
			t.Errorf("%s --help printed %q", v, r.stderr)
		}
	}
}
