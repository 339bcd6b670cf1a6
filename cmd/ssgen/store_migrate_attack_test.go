package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/schema"
)

// TestMigrateRollbackRefusesCraftedBackup: a backup line names any key;
// lines added to a genuine backup that would write EVIL into a key no
// declaration of the schema matches, or into a reserved key, are refused
// and listed with the reason (exit 1); a key an application wrote since
// the migration, even with the very bytes the migrator wrote, is kept.
func TestMigrateRollbackRefusesCraftedBackup(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	c := clienttest.Dial(t, url)
	ctx := clienttest.Context(t)
	for _, kv := range [][2]string{{"victim", "good"}, {"$ssgen/schema", "published"}} {
		if _, err := c.Set(ctx, []byte(kv[0]), []byte(kv[1]), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	backup := filepath.Join(t.TempDir(), "backup.jsonl")
	run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", backup).want(t, exitOK, nil)
	// The application writes evolve/mode again, with the bytes the
	// migrator wrote.
	mode, _, err := c.Get(ctx, []byte("evolve/mode"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, []byte("evolve/mode"), mode, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(backup, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []migrate.BackupLine{
		{Key: []byte("victim"), New: []byte("good"), Old: []byte("EVIL")},
		{Key: []byte("$ssgen/schema"), New: []byte("published"), Old: []byte("EVIL")},
	} {
		j, _ := json.Marshal(l)
		if _, err := f.Write(append(j, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	r := run(t, url, "migrate", "rollback", "--schema", evolveV2, "--backup", backup)
	r.want(t, exitNegative, nil)
	for _, want := range []string{
		`skipped "victim": ` + migrate.SkipUndeclared,
		`skipped "$ssgen/schema": ` + migrate.SkipReserved,
		`skipped "evolve/mode": ` + migrate.SkipChanged,
		"rolled back: 2 keys restored, 1 kept (changed since the migration), 2 refused",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "2 backup keys refused") {
		t.Errorf("stderr: %s", r.stderr)
	}
	for k, want := range map[string]string{"victim": "good", "$ssgen/schema": "published", "evolve/mode": string(mode)} {
		if got, _, _ := c.Get(ctx, []byte(k)); string(got) != want {
			t.Errorf("%s = %q after rollback, want %q", k, got, want)
		}
	}
	// Rollback needs the schema that says which keys it may restore.
	r = runIn(t, "", nil, "migrate", "rollback", "--broker", url, "--backup", backup)
	if r.code != exitUsage || !strings.Contains(r.stderr, "no schema") {
		t.Errorf("rollback without a schema: %+v", r)
	}
}

// TestMigrateCraftedPositionIsCaught: whoever can write
// $ssgen/migrate/<name>/position can make apply resume past every key
// (the position's digests are computed from the schema file and its
// declarations). Apply then exits 1 saying how many keys are still
// outdated and that --restart walks every key; --restart migrates them.
func TestMigrateCraftedPositionIsCaught(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	src, err := os.ReadFile(evolveV2)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	s, err := schema.LoadFile(evolveV2)
	if err != nil {
		t.Fatal(err)
	}
	_, decls, _ := applyDecls(&cliEnv{stderr: io.Discard}, s, "apply")
	h := sha256.New()
	for _, d := range decls {
		fmt.Fprintf(h, "%d:%s%d:%s", len(d.Name), d.Name, len(d.Pattern), d.Pattern)
	}
	pos, _ := json.Marshal(map[string]any{"schema": hex.EncodeToString(sum[:]), "decls": hex.EncodeToString(h.Sum(nil)), "decl": "", "index": len(decls)})
	c := clienttest.Dial(t, url)
	if _, err := c.Set(clienttest.Context(t), []byte(migrate.Prefix+"default/position"), pos, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}

	r := run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "1.jsonl"))
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stdout, "resumed: 0 keys seen") || !strings.Contains(r.stderr, "3 keys are still outdated") || !strings.Contains(r.stderr, "apply --restart walks every key") {
		t.Fatalf("apply resuming a crafted position: %+v", r)
	}
	run(t, url, "migrate", "apply", "--schema", evolveV2, "--restart", "--backup", filepath.Join(t.TempDir(), "2.jsonl")).want(t, exitOK, nil)
	run(t, url, "migrate", "validate", "--schema", evolveV2).want(t, exitOK, nil)
}

// TestMigrateInterruptedInItsFirstPage: the position is saved after each
// completed page; Ctrl-C inside the first page (--rate 2, 30 keys) saves
// none, and apply says so instead of claiming the position is saved. The
// next apply starts from the first key and finishes.
func TestMigrateInterruptedInItsFirstPage(t *testing.T) {
	url := testStore(t)
	// One declaration, so the first page is that of its 30 keys.
	dir := t.TempDir()
	const head = "version: 1\npackage: mig\ngroups:\n  Site:\n    path: sites/{site}\n    params: {site: string}\n    keys:\n      Config: {path: config, type: Zone}\ntypes:\n  Zone:\n    fields:\n      name: string\n"
	v1, v2 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	for f, text := range map[string]string{v1: head + "      temp: float64\n", v2: head + "      celsius: {type: float64, renamed_from: temp}\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s1, err := schema.LoadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	old, err := schemaval.ForKey(s1.AllKeys()[0]).EncodeJSON([]byte(`{"name":"a","temp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.Dial(t, url)
	for i := range 30 {
		if _, err := c.Set(clienttest.Context(t), fmt.Appendf(nil, "sites/s%d/config", i), old, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Ctrl-C once the migrator holds its lease, seconds before the
		// first page of 30 keys at 2 keys/s is read.
		waitFor(t, "the migrator's lease", func() bool {
			_, _, err := c.Get(context.Background(), []byte(migrate.Prefix+"default/lock"))
			return err == nil
		})
		cancel()
	}()
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", v2, "--rate", "2", "--backup", filepath.Join(dir, "1.jsonl")})
	if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted before it completed a page") ||
		!strings.Contains(stderr.String(), "no position was saved by this run: run ssgen migrate apply --name default again to start from the first key") ||
		strings.Contains(stderr.String(), "the position is saved") {
		t.Fatalf("interrupted apply: exit %d, stderr %s", code, stderr.String())
	}
	if _, _, err := c.Get(clienttest.Context(t), []byte(migrate.Prefix+"default/position")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("a position was saved: %v", err)
	}
	r := run(t, url, "migrate", "apply", "--schema", v2, "--backup", filepath.Join(dir, "2.jsonl"))
	r.want(t, exitOK, nil)
	if strings.Contains(r.stdout, "resumed") {
		t.Errorf("second apply resumed: %s", r.stdout)
	}
	run(t, url, "migrate", "validate", "--schema", v2).want(t, exitOK, nil)
}

// TestMigrateRollbackRefusesForgedLinesWithoutSteps: in a backup with
// steps, a line without a step for a declared key with no record of the
// migration's write is refused (it used to restore its bytes, given only
// the key's current value); in any backup, old bytes that do not decode
// as the declaration's type are refused.
func TestMigrateRollbackRefusesForgedLinesWithoutSteps(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	c := clienttest.Dial(t, url)
	ctx := clienttest.Context(t)
	backup := filepath.Join(t.TempDir(), "backup.jsonl")
	run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", backup).want(t, exitOK, nil)
	current := func(k string) []byte {
		v, _, err := c.Get(ctx, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	setpoint := current("evolve/setpoint")
	src, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var old []byte
	for _, l := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		var bl migrate.BackupLine
		if err := json.Unmarshal([]byte(l), &bl); err != nil {
			t.Fatal(err)
		}
		if string(bl.Key) != "evolve/setpoint" {
			kept = append(kept, l)
		} else {
			old = bl.Old // a value of the declaration: the check of old bytes passes
		}
	}
	forged, _ := json.Marshal(migrate.BackupLine{Key: []byte("evolve/setpoint"), New: setpoint,
		Old: old, Version: "x"})
	if err := os.WriteFile(backup, []byte(strings.Join(append(kept, string(forged)), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, url, "migrate", "rollback", "--schema", evolveV2, "--backup", backup)
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stdout, `skipped "evolve/setpoint": `+migrate.SkipNotWritten) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got := current("evolve/setpoint"); string(got) != string(setpoint) {
		t.Errorf("evolve/setpoint = %s after a forged line", got)
	}

	// A backup without steps (an earlier release's): old bytes that are
	// not a value of the declaration are refused.
	legacy, _ := json.Marshal(migrate.BackupLine{Key: []byte("evolve/setpoint"), New: setpoint, Old: []byte("EVIL"), Version: "x"})
	if err := os.WriteFile(backup, append(legacy, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, url, "migrate", "rollback", "--schema", evolveV2, "--backup", backup)
	r.want(t, exitNegative, nil)
	if !strings.Contains(r.stdout, `skipped "evolve/setpoint": `+migrate.SkipOldInvalid) || !strings.Contains(r.stdout, "0 keys restored") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if got := current("evolve/setpoint"); string(got) != string(setpoint) {
		t.Errorf("evolve/setpoint = %s after a line whose old bytes do not decode", got)
	}
}

// TestMigrateSquattedLock: a value written by hand to the migration lock
// (no TTL: it never expires) makes apply fail naming the lock key, what
// it holds, that it is no migrator's lease, and how to check and clear
// it; apply --wait says once that it waits, and Ctrl-C while waiting says
// nothing was written (not that a page was interrupted).
func TestMigrateSquattedLock(t *testing.T) {
	url := testStore(t)
	seedEvolveV1(t, url)
	c := clienttest.Dial(t, url)
	lock := migrate.Prefix + "default/lock"
	if _, err := c.Set(clienttest.Context(t), []byte(lock), []byte("squat"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	r := run(t, url, "migrate", "apply", "--schema", evolveV2, "--backup", filepath.Join(t.TempDir(), "1.jsonl"))
	r.want(t, exitNegative, nil)
	for _, want := range []string{
		`the migration lock $ssgen/migrate/default/lock holds "squat", which is not a migrator's lease`,
		"may have no TTL and never expire",
		"ssgen get '$ssgen/migrate/default/lock'",
		"clear it with ssgen del '$ssgen/migrate/default/lock'",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in stderr: %s", want, r.stderr)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	go func() {
		waitFor(t, "apply --wait to say it waits", func() bool {
			return strings.Contains(stderr.String(), "waiting for the migration lock $ssgen/migrate/default/lock holds \"squat\"")
		})
		cancel()
	}()
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runCLI(ctx, env, []string{"migrate", "apply", "--broker", url, "--schema", evolveV2, "--wait", "--backup", filepath.Join(t.TempDir(), "2.jsonl")})
	if code != exitInterrupted || strings.Count(stderr.String(), "apply: waiting for the migration lock") != 1 ||
		!strings.Contains(stderr.String(), "interrupted while waiting for the migration lock $ssgen/migrate/default/lock: nothing written") ||
		strings.Contains(stderr.String(), "completed a page") {
		t.Fatalf("apply --wait interrupted: exit %d, stderr %s", code, stderr.String())
	}
}
