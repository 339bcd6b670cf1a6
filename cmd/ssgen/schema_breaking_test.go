package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const breakingCases = "../../schema/testdata/breaking/"

func readCase(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(breakingCases + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func TestBreakingAgainstAFileExitsOneOnABreakingChange(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.yaml", readCase(t, "key-removed/old.yaml"))
	cur := writeFile(t, dir, "ssgen.yaml", readCase(t, "key-removed/new.yaml"))
	r := runSchemaVerb(t, "breaking", "--against", old, cur)
	r.wantCode(t, exitNegative)
	want := old + ":28:7: error[key-removed]: key Thermostat.Count (thermostats/{id}/count) was removed; its stored values are orphaned\n"
	if r.stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r.stderr != "ssgen breaking: 1 breaking change(s), 0 warning(s)\n" {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestBreakingWithOnlyWarningsExitsZero(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.yaml", readCase(t, "ttl-removed/old.yaml"))
	cur := writeFile(t, dir, "ssgen.yaml", readCase(t, "ttl-removed/new.yaml"))
	res := runSchemaVerb(t, "breaking", cur, "--against", old)
	res.wantCode(t, exitOK)
	if !strings.Contains(res.stdout, "warning[key-ttl-removed]") {
		t.Fatalf("stdout %q", res.stdout)
	}
}

func TestBreakingFormatsJSONAndGitHubActions(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.yaml", readCase(t, "key-path-changed/old.yaml"))
	cur := writeFile(t, dir, "ssgen.yaml", readCase(t, "key-path-changed/new.yaml"))

	r := runSchemaVerb(t, "breaking", "--against", old, "--format", "json", cur)
	r.wantCode(t, exitNegative)
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in %s", err, r.stdout)
	}
	if len(got) != 1 || got[0]["rule"] != "key-path-changed" || got[0]["severity"] != "error" ||
		got[0]["file"] != cur || got[0]["line"] != 20.0 || got[0]["column"] != 15.0 {
		t.Fatalf("json %v", got)
	}

	r = runSchemaVerb(t, "breaking", "--against", old, "--format", "github-actions", cur)
	r.wantCode(t, exitNegative)
	want := "::error file=" + cur + ",line=20,col=15,title=ssgen breaking%3A key-path-changed::key Thermostat.SetPoint: path changed from thermostats/{id}/setPoint to thermostats/{id}/target; values stored under the old path are orphaned (add renamed_from: \"setPoint\" to the key if it moved)\n"
	if r.stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}

	same := runSchemaVerb(t, "breaking", "--against", old, "--format", "json", old)
	same.wantCode(t, exitOK)
	if same.stdout != "[]\n" {
		t.Fatalf("no changes printed %q", same.stdout)
	}
}

func TestBreakingAgainstAGitRevision(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "app")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cur := writeFile(t, sub, "ssgen.yaml", readCase(t, "enum-value-removed/old.yaml"))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "schema")
	writeFile(t, sub, "ssgen.yaml", readCase(t, "enum-value-removed/new.yaml"))

	r := runSchemaVerb(t, "breaking", "--against", "HEAD", cur)
	r.wantCode(t, exitNegative)
	want := cur + ":4:3: error[enum-value-removed]: enum Mode: value \"off\" was removed; stored values holding it no longer decode\n"
	if r.stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	runSchemaVerb(t, "breaking", "--against", "HEAD:app/ssgen.yaml", cur).wantCode(t, exitNegative)

	fresh := writeFile(t, sub, "fresh.yaml", readCase(t, "enum-value-removed/new.yaml"))
	r = runSchemaVerb(t, "breaking", "--against", "HEAD", fresh)
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stderr, "does not exist in the revision") {
		t.Fatalf("a schema new in the change: stderr %q", r.stderr)
	}

	bad := runSchemaVerb(t, "breaking", "--against", "no-such-rev", cur)
	bad.wantCode(t, exitUsage)
	if !strings.Contains(bad.stderr, "git show no-such-rev:./ssgen.yaml failed") {
		t.Fatalf("stderr %q", bad.stderr)
	}
}

func TestBreakingUsageErrors(t *testing.T) {
	f := writeFile(t, t.TempDir(), "ssgen.yaml", thermostatSchema(t))
	runSchemaVerb(t, "breaking", f).wantCode(t, exitUsage)
	runSchemaVerb(t, "breaking", "--against", f, "--format", "xml", f).wantCode(t, exitUsage)
	runSchemaVerb(t, "breaking", "--against", f, f, f).wantCode(t, exitUsage)
}
