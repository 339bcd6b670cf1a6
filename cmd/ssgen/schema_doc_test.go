package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDocPrintsMarkdownOfTheSchema(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "ssgen.yaml", thermostatSchema(t))
	r := runSchemaVerb(t, "doc", f)
	r.wantCode(t, exitOK)
	for _, want := range []string{
		"# State store schema `thermostat`",
		"| `Thermostat.SetPoint` | `thermostats/{id}/setPoint` | `id string` | `SetPoint` | msgpack | — | `Thermostat.Owner` |",
		"| `Thermostat.Reading` | `thermostats/{id}/reading` | `id string` | `float64` | string | 30s | — |",
		"| `Thermostat.Owner` | `thermostats/{id}/owner` | `id string` | 10s | `Thermostat.SetPoint` |",
		"Desired temperature, written by operators.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doc output lacks %q\n%s", want, r.stdout)
		}
	}
	out := filepath.Join(dir, "SCHEMA.md")
	runSchemaVerb(t, "doc", "-o", out, f).wantCode(t, exitOK)
	if got, _ := os.ReadFile(out); string(got) != r.stdout {
		t.Fatal("-o wrote something else than stdout shows")
	}
}

func TestDocOfAMissingFileExitsTwo(t *testing.T) {
	r := runSchemaVerb(t, "doc", filepath.Join(t.TempDir(), "nope.yaml"))
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "no such file") {
		t.Fatalf("stderr %q", r.stderr)
	}
}
