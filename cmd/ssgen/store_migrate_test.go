package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/schema"
)

// The fixtures, as absolute paths (a test may change directory).
var (
	evolveV1   = mustAbs("..", "..", "internal", "tests", "e2e", "evolve", "v1", "ssgen.yaml")
	evolveV2   = mustAbs("..", "..", "internal", "tests", "e2e", "evolve", "v2", "ssgen.yaml")
	versionsV1 = mustAbs("..", "..", "internal", "tests", "e2e", "versions", "v1", "ssgen.yaml")
	versionsV2 = mustAbs("..", "..", "internal", "tests", "e2e", "versions", "v2", "ssgen.yaml")
)

func mustAbs(elem ...string) string {
	a, err := filepath.Abs(filepath.Join(elem...))
	if err != nil {
		panic(err)
	}
	return a
}

// seedEvolveV1 writes values as the first version of the evolve schema
// does: three keys whose form the second version changes, and one moved
// key migrate leaves alone.
func seedEvolveV1(t *testing.T, url string) {
	t.Helper()
	v1 := evolveV1
	for _, kv := range [][2]string{
		{"evolve/setpoint", `{"temp":21.5,"mode":"chill","legacy":"x","zones":[{"name":"a","temp":1}],"byRoom":{}}`},
		{"evolve/mode", `chill`},
		{"evolve/zones", `{"x":{"name":"x","temp":4}}`},
		{"evolve/count", `7`},
	} {
		run(t, url, "set", "--schema", v1, kv[0], kv[1]).want(t, exitOK, nil)
	}
}

// progressLines parses the JSON progress lines of apply's stderr.
func progressLines(t *testing.T, stderr string) []progressLine {
	t.Helper()
	var out []progressLine
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var p progressLine
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("progress line %q: %v", l, err)
		}
		out = append(out, p)
	}
	return out
}

// TestMigrateJourney: plan, validate, apply, validate, rollback against
// both stores, with a schema whose second version renames, defaults and
// removes fields and renames an enum value.
func TestMigrateJourney(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) {
			url := st.url(t)
			seedEvolveV1(t, url)
			v2 := evolveV2
			before := run(t, url, "get", "--hex", "evolve/setpoint")

			r := run(t, url, "migrate", "plan", "--schema", v2, "--against", evolveV1)
			r.want(t, exitOK, nil)
			for _, want := range []string{
				"field-renamed", // what changed since
				"SetPoint (evolve/setpoint, SetPoint)",
				"keys: 0 current, 1 outdated, 0 invalid",
				"Counter (from evolve/count)",
				"plan: 3 keys to rewrite",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("plan: no %q in:\n%s", want, r.stdout)
				}
			}

			r = run(t, url, "migrate", "validate", "--schema", v2)
			r.want(t, exitNegative, nil)
			if !strings.Contains(r.stdout, "SetPoint: 0 current, 1 outdated, 0 invalid") || !strings.Contains(r.stderr, "3 keys are outdated or invalid") {
				t.Errorf("validate before: %+v", r)
			}

			backup := filepath.Join(t.TempDir(), "backup.jsonl")
			r = run(t, url, "migrate", "apply", "--schema", v2, "--backup", backup)
			r.want(t, exitOK, nil)
			if strings.Contains(r.stderr, "[y/N]") {
				t.Errorf("apply asked with stdin not a terminal: %s", r.stderr)
			}
			if !strings.Contains(r.stderr, "backup: "+backup) || !strings.Contains(r.stdout, "3 rewritten, 0 failed") {
				t.Errorf("apply: %+v", r)
			}
			lines := progressLines(t, r.stderr)
			if len(lines) == 0 {
				t.Fatalf("no JSON progress lines: %s", r.stderr)
			}
			var rewritten int64
			for _, p := range lines {
				if p.Decl == "" || p.Done > p.Total {
					t.Errorf("progress line %+v", p)
				}
				rewritten += p.Rewritten
			}
			if rewritten != 3 {
				t.Errorf("progress lines sum to %d rewritten, want 3: %s", rewritten, r.stderr)
			}

			run(t, url, "migrate", "validate", "--schema", v2).want(t, exitOK, nil)
			if after := run(t, url, "get", "--hex", "evolve/setpoint"); after.stdout == before.stdout {
				t.Errorf("evolve/setpoint not rewritten: %s", after.stdout)
			}
			r = run(t, url, "get", "--schema", v2, "evolve/mode")
			if strings.TrimSpace(r.stdout) != "cool" {
				t.Errorf("evolve/mode after apply: %+v", r)
			}
			// The moved key is not moved.
			run(t, url, "get", "--hex", "evolve/count").want(t, exitOK, ptr("d30000000000000007\n"))

			// A backup file is never overwritten.
			saved, err := os.ReadFile(backup)
			if err != nil || len(saved) == 0 {
				t.Fatalf("backup: %q, %v", saved, err)
			}
			r = run(t, url, "migrate", "apply", "--schema", v2, "--backup", backup)
			r.want(t, exitUsage, nil)
			if !strings.Contains(r.stderr, "never overwrites") {
				t.Errorf("apply over an existing backup: %s", r.stderr)
			}
			if again, _ := os.ReadFile(backup); !bytes.Equal(again, saved) {
				t.Fatal("the backup file changed")
			}

			r = run(t, url, "migrate", "rollback", "--schema", v2, "--backup", backup)
			r.want(t, exitOK, ptr("rolled back: 3 keys restored, 0 kept (changed since the migration), 0 refused (reserved, undeclared, not written by the migration, or old bytes that do not decode)\n"))
			if back := run(t, url, "get", "--hex", "evolve/setpoint"); back.stdout != before.stdout {
				t.Errorf("after rollback %s, want %s", back.stdout, before.stdout)
			}
			run(t, url, "migrate", "validate", "--schema", v2).want(t, exitNegative, nil)
		})
	}
}

// TestMigrateRefusesGoConversions: a versioned type's values at an
// earlier version take the user's Go conversion: plan says so and names
// the entry point, apply refuses and writes nothing.
func TestMigrateRefusesGoConversions(t *testing.T) {
	url := testStore(t)
	v1, v2 := versionsV1, versionsV2
	run(t, url, "set", "--schema", v1, "versions/setpoint", `{"fahrenheit":212,"mode":"cool"}`).want(t, exitOK, nil)
	before := run(t, url, "get", "--hex", "versions/setpoint")

	r := run(t, url, "migrate", "plan", "--schema", v2)
	r.want(t, exitOK, nil)
	for _, want := range []string{"(v1: 1)", "1 need a Go conversion (convertSetPointV1)", "Migrations()"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan: no %q in:\n%s", want, r.stdout)
		}
	}
	r = run(t, url, "migrate", "validate", "--schema", v2)
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stdout, "SetPoint: 0 current, 1 outdated, 0 invalid (v1: 1); 1 need a Go conversion") {
		t.Errorf("validate: %s", r.stdout)
	}
	dir := t.TempDir()
	r = run(t, url, "migrate", "apply", "--schema", v2, "--backup", filepath.Join(dir, "b.jsonl"))
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stderr, "refused, nothing written") || !strings.Contains(r.stderr, "convertSetPointV1") || !strings.Contains(r.stderr, "Migrations()") {
		t.Errorf("apply: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.jsonl")); err == nil {
		t.Error("a refused apply created its backup file")
	}
	if after := run(t, url, "get", "--hex", "versions/setpoint"); after.stdout != before.stdout {
		t.Errorf("value changed: %s", after.stdout)
	}
}

// TestMigrateDefaultBackupIsANewFile: without --backup, each apply
// creates a new file in the current directory, names it on stderr, and
// never reuses an existing name.
func TestMigrateDefaultBackupIsANewFile(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	v2 := evolveV2
	dir := t.TempDir()
	t.Chdir(dir)
	// A file already holding the name the first apply would pick, at
	// least for runs within this second or the next.
	now := time.Now().UTC()
	for _, at := range []time.Time{now, now.Add(time.Second)} {
		name := "ssgen-migrate-default-" + at.Format("20060102T150405Z") + ".jsonl"
		if err := os.WriteFile(name, []byte("keep\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for i := range 2 {
		if i > 0 {
			seedEvolveV1(t, url) // outdated again
		}
		r := run(t, url, "migrate", "apply", "--schema", v2)
		r.want(t, exitOK, nil)
		_, after, ok := strings.Cut(r.stderr, "backup: ")
		if !ok {
			t.Fatalf("no backup named: %s", r.stderr)
		}
		name := strings.TrimSpace(strings.SplitN(after, "\n", 2)[0])
		if filepath.Dir(name) != "." || !strings.HasPrefix(name, "ssgen-migrate-default-") {
			t.Errorf("backup %q is not a new file in the current directory", name)
		}
		names = append(names, name)
	}
	if names[0] == names[1] {
		t.Fatalf("both runs wrote %s", names[0])
	}
	if b, _ := os.ReadFile(names[0]); !bytes.Contains(b, []byte(`"key"`)) {
		t.Errorf("first backup %s: %q", names[0], b)
	}
	entries, _ := os.ReadDir(dir)
	kept := 0
	for _, e := range entries {
		if b, _ := os.ReadFile(e.Name()); string(b) == "keep\n" {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d of the 2 existing files kept their content", kept)
	}
}

// cancelOnWrite is a stderr that cancels once it has seen a progress line.
type cancelOnWrite struct {
	mu     sync.Mutex
	b      bytes.Buffer
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Contains(p, []byte(`"decl"`)) {
		c.cancel()
	}
	return c.b.Write(p)
}

func (c *cancelOnWrite) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// TestMigrateInterruptedResumes: Ctrl-C (the context cancelled) stops
// apply after the keys in flight with exit 130 and a line saying apply
// resumes; apply again finishes, and every key is current.
func TestMigrateInterruptedResumes(t *testing.T) {
	url := testStore(t)
	v1, v2 := evolveV1, evolveV2
	// Many keys of one declaration in the first schema's form, so that
	// the run spans several pages.
	s1, err := schema.LoadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	var cfg *schema.Key
	for _, k := range s1.AllKeys() {
		if k.QualifiedName() == "Site.Config" {
			cfg = k
		}
	}
	old, err := schemaval.ForKey(cfg).EncodeJSON([]byte(`{"name":"a","temp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.Dial(t, url)
	for i := range 300 {
		if _, err := c.Set(clienttest.Context(t), []byte(fmt.Sprintf("evolve/sites/s%d/config", i)), old, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{cancel: cancel}
	var stdout syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: stderr, getenv: func(string) string { return "" }}
	dir := t.TempDir()
	code := runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", v2, "--rate", "200", "--backup", filepath.Join(dir, "1.jsonl")})
	if code != exitInterrupted || !strings.Contains(stderr.String(), "run ssgen migrate apply --name default again to resume") {
		t.Fatalf("interrupted apply: exit %d, stderr %s", code, stderr.String())
	}
	r := run(t, url, "migrate", "apply", "--schema", v2, "--backup", filepath.Join(dir, "2.jsonl"))
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, "resumed: ") {
		t.Errorf("second apply did not resume: %s", r.stdout)
	}
	run(t, url, "migrate", "validate", "--schema", v2).want(t, exitOK, nil)
}

// TestMigrateProgressBar: on a terminal, one line redrawn with \r
// (done/total, rate, time left), ended with a newline.
func TestMigrateProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, true)
	p.report(migrate.Progress{Decl: "SetPoint", Done: 50, Total: 200, Rate: 25})
	p.note("ssgen migrate apply: backup: b.jsonl") // on a line of its own, not after the bar
	p.report(migrate.Progress{Decl: "SetPoint", Done: 200, Total: 200, Rate: 40})
	p.finish()
	out := b.String()
	want := "\r[#####...............] 50/200 SetPoint  25 keys/s  0:06 left\n" +
		"ssgen migrate apply: backup: b.jsonl\n" +
		"\r[####################] 200/200 SetPoint  40 keys/s  0:00 left\n"
	if out != want {
		t.Fatalf("bar %q, want %q", out, want)
	}
	b.Reset()
	p = newProgress(&b, false)
	p.report(migrate.Progress{Decl: "Site.Config", Done: 10, Total: 40, Rewritten: 9, Skipped: 1, Rate: 5.01})
	p.finish()
	var line progressLine
	if err := json.Unmarshal(b.Bytes(), &line); err != nil || line.Decl != "Site.Config" || line.Done != 10 || line.Total != 40 || line.Left != 6 || line.Rate != 5 || !strings.HasSuffix(b.String(), "}\n") {
		t.Fatalf("JSON line %q: %+v, %v", b.String(), line, err)
	}
}

// TestMigrateHelpAndUsage: every migrate verb has help; a missing verb or
// flag is a usage error.
func TestMigrateHelpAndUsage(t *testing.T) {
	for _, v := range []string{"plan", "apply", "validate", "rollback"} {
		r := runIn(t, "", nil, "migrate", v, "--help")
		r.want(t, exitOK, nil)
		if !strings.Contains(r.stderr, "usage: ssgen migrate "+v) {
			t.Errorf("%s --help: %s", v, r.stderr)
		}
		r = runIn(t, "", nil, "help", "migrate", v)
		r.want(t, exitOK, nil)
		if !strings.Contains(r.stdout, "usage: ssgen migrate "+v) {
			t.Errorf("help migrate %s: %s", v, r.stdout)
		}
	}
	runIn(t, "", nil, "help", "migrate", "frobnicate").want(t, exitUsage, nil)
	runIn(t, "", nil, "migrate").want(t, exitUsage, nil)
	runIn(t, "", nil, "migrate", "frobnicate").want(t, exitUsage, nil)
	runIn(t, "", nil, "migrate", "rollback").want(t, exitUsage, nil)
	r := runIn(t, "", nil, "migrate", "validate", "--schema", filepath.Join(t.TempDir(), "none.yaml"))
	r.want(t, exitUsage, nil)
}

// TestMigrateApplyWhileAnotherRuns: a second migrator of the same name
// is refused (exit 1) while the first holds the lease.
func TestMigrateApplyWhileAnotherRuns(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	c := clienttest.Dial(t, url)
	lease, ok, err := runtime.NewLock(c, []byte(migrate.Prefix+"default/lock"), time.Minute).TryAcquire(clienttest.Context(t))
	if err != nil || !ok {
		t.Fatalf("TryAcquire: %v %v", ok, err)
	}
	defer func() { _ = lease.Release(context.Background()) }()
	r := run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl"))
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stderr, `another migrator named "default" is running`) {
		t.Errorf("stderr %s", r.stderr)
	}
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitNegative, nil)
}

// TestMigrateInvalidValues: a value that does not decode is counted
// invalid with its reason, and apply leaves it as it was (exit 1).
func TestMigrateInvalidValues(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	run(t, url, "set", "--raw", "evolve/tree", "\x1b[2Jnot msgpack").want(t, exitOK, nil)
	r := run(t, url, "migrate", "validate", "--schema", evolveV2)
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stdout, "Tree: 0 current, 0 outdated, 1 invalid; the first invalid: ") || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("validate: %q", r.stdout)
	}
	r = run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl"))
	if r.code != exitNegative || !strings.Contains(r.stdout, "3 rewritten, 1 failed") || !strings.Contains(r.stderr, "1 keys left as they were") {
		t.Errorf("apply: %+v", r)
	}
	run(t, url, "get", "--raw", "evolve/tree").want(t, exitOK, ptr("\x1b[2Jnot msgpack\n"))
}

// TestMigrateBackupPathPlanted: a --backup path planted as a symlink (to
// a file the user owns, or to nowhere) is refused before anything is
// written; the target is neither changed nor created.
func TestMigrateBackupPathPlanted(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{target, filepath.Join(dir, "nowhere")} {
		link := filepath.Join(dir, "link-"+filepath.Base(to))
		if err := os.Symlink(to, link); err != nil {
			t.Skip(err)
		}
		r := run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", link)
		r.want(t, exitUsage, nil)
		if !strings.Contains(r.stderr, "never overwrites") {
			t.Errorf("stderr %s", r.stderr)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("target now %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the dangling link's target was created")
	}
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitNegative, nil)
}

// TestMigrateOverlappingPatterns: a declaration whose key pattern also
// lists another declaration's keys (a parameter matches '/') is left out
// of apply, so those keys are never read with the wrong type; validate
// says its counts include them.
func TestMigrateOverlappingPatterns(t *testing.T) {
	url := testStore(t)
	file := filepath.Join(t.TempDir(), "ssgen.yaml")
	src := `version: 1
package: p
types:
  A: {fields: {n: {type: int, renamed_from: m}}}
  B: {fields: {s: {type: string, renamed_from: r}}}
keys:
  Deep: {path: sites/x/y/v, type: B}
groups:
  Site:
    path: sites/{id}
    params: {id: string}
    keys:
      V: {path: v, type: A}
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, url, "set", "--raw", "--schema", file, "sites/x/y/v", "\x81\xa1r\xa1q").want(t, exitOK, nil)
	r := run(t, url, "migrate", "apply", "--schema", file, "--backup", filepath.Join(t.TempDir(), "b.jsonl"))
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stderr, `Site.V left out: its keys' pattern "sites/*/v" also lists keys of Deep`) || !strings.Contains(r.stdout, "1 rewritten, 0 failed") {
		t.Errorf("apply: %+v", r)
	}
	r = run(t, url, "migrate", "validate", "--schema", file)
	if r.code != exitNegative || !strings.Contains(r.stdout, "Deep: 1 current, 0 outdated, 0 invalid\n") || !strings.Contains(r.stdout, "also lists keys of Deep: they are counted here too") {
		t.Errorf("validate: %+v", r)
	}
}

// TestMigrateGuardedKey: a key written under its guard lock's fencing
// token is rewritten under that lock's lease.
func TestMigrateGuardedKey(t *testing.T) {
	url := testStore(t)
	if err := writeGuardedSiteConfig(t, url).Release(clienttest.Context(t)); err != nil {
		t.Fatal(err)
	}
	r := run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl"))
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, "1 rewritten, 0 failed") {
		t.Errorf("apply: %+v", r)
	}
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitOK, nil)
}

// writeGuardedSiteConfig writes evolve/sites/s1/config in evolveV1's
// form, fenced under its guard lock's lease, and returns the lease, held.
func writeGuardedSiteConfig(t *testing.T, url string) *runtime.Lease {
	t.Helper()
	s1, err := schema.LoadFile(evolveV1)
	if err != nil {
		t.Fatal(err)
	}
	var cfg *schema.Key
	for _, k := range s1.AllKeys() {
		if k.QualifiedName() == "Site.Config" {
			cfg = k
		}
	}
	old, err := schemaval.ForKey(cfg).EncodeJSON([]byte(`{"name":"a","temp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.Dial(t, url)
	ctx := clienttest.Context(t)
	lease, ok, err := runtime.NewLock(c, []byte("evolve/sites/s1/owner"), time.Minute).TryAcquire(ctx)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := c.Set(ctx, []byte("evolve/sites/s1/config"), old, runtime.SetOptions{FencingToken: lease.Token()}); err != nil {
		t.Fatal(err)
	}
	return lease
}

// TestMigrateSaysWhichGuardLockItWaitsFor: apply waiting for a guarded
// key's lock that a writer holds says so on stderr, naming the lock and
// its holder, and finishes once the writer releases it.
func TestMigrateSaysWhichGuardLockItWaitsFor(t *testing.T) {
	url := testStore(t)
	lease := writeGuardedSiteConfig(t, url)
	ctx := clienttest.Context(t)
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "b.jsonl")})
	}()
	want := `waiting for the guard lock "evolve/sites/s1/owner", held by ` + fmt.Sprintf("%q", lease.Holder())
	testwait.Until(t, 20*time.Second, "apply to say it waits for the guard lock", func() bool { return strings.Contains(stderr.String(), want) })
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != exitOK || !strings.Contains(stdout.String(), "1 rewritten, 0 failed") {
		t.Fatalf("apply: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestMigrateResumesOnlyTheSameSchema: a position saved by a run of one
// schema file is not resumed by a run of another (its sha256 differs):
// apply refuses (exit 1) until --restart.
func TestMigrateResumesOnlyTheSameSchema(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	src, err := os.ReadFile(evolveV2)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "ssgen.yaml")
	if err := os.WriteFile(other, append(src, "# edited\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clienttest.Dial(t, url)
	// A position as an interrupted run of evolveV2 leaves it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOnWrite{cancel: cancel}
	var stdout syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: stderr, getenv: func(string) string { return "" }}
	if code := runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", evolveV2, "--rate", "20", "--backup", filepath.Join(t.TempDir(), "0.jsonl")}); code != exitInterrupted {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, _, err := c.Get(clienttest.Context(t), []byte(migrate.Prefix+"default/position")); err != nil {
		t.Fatalf("no position saved: %v", err)
	}
	r := run(t, url, "migrate", "apply", "--schema", other, "--backup", filepath.Join(t.TempDir(), "1.jsonl"))
	if r.code != exitNegative || !strings.Contains(r.stderr, "--restart") {
		t.Fatalf("apply of another schema: %+v", r)
	}
	r = run(t, url, "migrate", "apply", "--schema", other, "--restart", "--backup", filepath.Join(t.TempDir(), "2.jsonl"))
	r.want(t, exitOK, nil)
	run(t, url, "migrate", "validate", "--schema", other).want(t, exitOK, nil)
}

// TestMigrateBackupFlagOnce: rollback --backup A --backup B is refused (it
// used to roll back B alone); so is apply's.
func TestMigrateBackupFlagOnce(t *testing.T) {
	for _, v := range []string{"apply", "rollback"} {
		r := runIn(t, "", nil, "migrate", v, "--backup", "a.jsonl", "--backup", "b.jsonl")
		r.want(t, exitUsage, nil)
		if !strings.Contains(r.stderr, "ssgen migrate "+v+": ") || !strings.Contains(r.stderr, "given twice") {
			t.Errorf("%s: stderr %q", v, r.stderr)
		}
	}
}

// A guard lock holding a value written by hand (no lease's id) is named
// as such, with how to check and clear it, as the migration lock is.
func TestGuardHeldByHandSaysHowToClearIt(t *testing.T) {
	got := guardHeld([]byte("sites/s1/owner"), []byte("by-hand"))
	for _, want := range []string{`"sites/s1/owner"`, `"by-hand"`, "written by hand", "ssgen get 'sites/s1/owner'", "ssgen del 'sites/s1/owner'"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if got := guardHeld([]byte("sites/s1/owner"), []byte("app-1/0123456789abcdef")); strings.Contains(got, "by hand") {
		t.Errorf("a lease's holder named as written by hand: %q", got)
	}
}
