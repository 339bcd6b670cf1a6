package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server/servertest"
)

// A value written through the first version of a schema reads through the
// second under the field's new name, with the new field's default and the
// enum value's new spelling: ssgen applies renamed_from and default
// without generated code.
func TestShellVerbsReadValuesOfAnEarlierSchema(t *testing.T) {
	url := servertest.New(t).URL()
	v1 := filepath.Join("testdata", "evolve", "v1.yaml")
	v2 := filepath.Join("testdata", "evolve", "v2.yaml")
	for _, key := range []string{"reading", "reading-json"} {
		run(t, url, "set", "--schema", v1, key, `{"temp": 20, "mode": "chill"}`).want(t, exitOK, nil)
		r := run(t, url, "get", "--schema", v2, key, "--json")
		r.want(t, exitOK, nil)
		var got struct{ Value map[string]any }
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: --json printed %q: %v", key, r.stdout, err)
		}
		want := map[string]any{"celsius": 20.0, "mode": "cool", "unit": "C"}
		if !reflect.DeepEqual(got.Value, want) {
			t.Errorf("%s: ssgen get --schema v2 shows %v, want %v", key, got.Value, want)
		}
	}
	run(t, url, "set", "--schema", v1, "mode", "chill").want(t, exitOK, nil)
	run(t, url, "get", "--schema", v2, "mode", "--quiet").want(t, exitOK, ptr("cool\n"))
}

// ssgen get of a key that moved reads its earlier key while it is absent,
// and says so.
func TestGetReadsTheEarlierKeyOfAMovedKey(t *testing.T) {
	url := servertest.New(t).URL()
	v1 := filepath.Join("testdata", "evolve", "v1.yaml")
	v2 := filepath.Join("testdata", "evolve", "v2.yaml")
	run(t, url, "get", "--schema", v2, "counter").want(t, exitNegative, ptr(""))
	run(t, url, "set", "--schema", v1, "count", "7").want(t, exitOK, nil)
	r := run(t, url, "get", "--schema", v2, "counter")
	r.want(t, exitOK, ptr("7\n"))
	if !strings.Contains(r.stderr, `read from its earlier key "count"`) {
		t.Errorf("stderr %q does not say where the value was read", r.stderr)
	}
	// The earlier key itself is the declared key's, typed.
	r = run(t, url, "get", "--schema", v2, "count")
	r.want(t, exitOK, ptr("7\n"))
	if !strings.Contains(r.stderr, "Count (int64, string; its earlier key)") {
		t.Errorf("stderr %q does not name the earlier key's declaration", r.stderr)
	}
	r = run(t, url, "get", "--schema", v2, "counter", "--json")
	var got struct {
		Value    int64
		ReadFrom string
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Value != 7 || got.ReadFrom != "count" {
		t.Errorf("--json printed %q (%v)", r.stdout, err)
	}
	run(t, url, "set", "--schema", v2, "counter", "8").want(t, exitOK, nil)
	r = run(t, url, "get", "--schema", v2, "counter", "--json")
	if strings.Contains(r.stdout, "readFrom") {
		t.Errorf("the key itself was read, yet --json printed %q", r.stdout)
	}
}

// Issue #27: ssgen set of a moved key left its earlier key, and a delete
// of the key then let the stale earlier value read as the key's again.
// set, del and vdel now treat the earlier key as generated code does.
func TestWritesOfAMovedKeyMoveIt(t *testing.T) {
	url := servertest.New(t).URL()
	v1 := filepath.Join("testdata", "evolve", "v1.yaml")
	v2 := filepath.Join("testdata", "evolve", "v2.yaml")
	run(t, url, "set", "--schema", v1, "count", "7").want(t, exitOK, nil)
	// --nx counts the earlier value as present (SetIfAbsent).
	run(t, url, "set", "--schema", v2, "--nx", "counter", "9").want(t, exitNegative, nil)
	run(t, url, "set", "--schema", v2, "counter", "8").want(t, exitOK, nil)
	run(t, url, "get", "--raw", "count").want(t, exitNegative, ptr(""))
	run(t, url, "del", "--schema", v2, "counter").want(t, exitOK, ptr(""))
	run(t, url, "get", "--schema", v2, "counter").want(t, exitNegative, ptr(""))

	// A delete removes the earlier key too, and the key counts as
	// deleted when only the earlier one held a value.
	run(t, url, "set", "--schema", v1, "count", "7").want(t, exitOK, nil)
	run(t, url, "del", "--schema", v2, "counter").want(t, exitOK, ptr(""))
	run(t, url, "get", "--raw", "count").want(t, exitNegative, ptr(""))
	run(t, url, "set", "--schema", v1, "count", "7").want(t, exitOK, nil)
	run(t, url, "vdel", "--schema", v2, "counter", "7").want(t, exitOK, ptr(""))
	run(t, url, "get", "--raw", "count").want(t, exitNegative, ptr(""))

	// The earlier key is not written through the schema: its key is.
	r := run(t, url, "set", "--schema", v2, "count", "5")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, `write its key "counter"`) {
		t.Errorf("stderr %q does not name the key to write", r.stderr)
	}
}

// A key that moved twice (renamed_from: [tempk2, tempk]) reads through
// each earlier key, and a write deletes them all.
func TestAKeyMovedTwiceReadsAndClearsEachEarlierKey(t *testing.T) {
	url := servertest.New(t).URL()
	v3 := filepath.Join(t.TempDir(), "ssgen.yaml")
	if err := os.WriteFile(v3, []byte("version: 1\npackage: p\nkeys:\n  Temp: {path: tempk3, renamed_from: [tempk2, tempk], type: int64, encoding: string}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, url, "set", "--raw", "tempk", "1").want(t, exitOK, nil)
	run(t, url, "get", "--schema", v3, "tempk3").want(t, exitOK, ptr("1\n"))
	run(t, url, "set", "--raw", "tempk2", "2").want(t, exitOK, nil)
	run(t, url, "get", "--schema", v3, "tempk3").want(t, exitOK, ptr("2\n"))
	run(t, url, "set", "--schema", v3, "tempk3", "3").want(t, exitOK, nil)
	run(t, url, "get", "--raw", "tempk2").want(t, exitNegative, ptr(""))
	run(t, url, "get", "--raw", "tempk").want(t, exitNegative, ptr(""))
}

// Issue #27: ssgen get --schema of a recursive value nested three million
// levels deep overflowed the stack. It now says the value nests too deep.
func TestGetOfADeepValueFailsCleanly(t *testing.T) {
	url := servertest.New(t).URL()
	dir := t.TempDir()
	sch := filepath.Join(dir, "ssgen.yaml")
	val := filepath.Join(dir, "deep")
	if err := os.WriteFile(sch, []byte("version: 1\npackage: p\ntypes:\n  Node:\n    fields:\n      name: string\n      kids: \"[]Node\"\nkeys:\n  Tree: {path: tree, type: Node}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(val, append(bytes.Repeat([]byte("\x81\xa4kids\x91"), 3_000_000), 0x80), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, url, "set", "--raw", "--file", val, "tree").want(t, exitOK, nil)
	r := run(t, url, "get", "--schema", sch, "tree")
	if r.code == exitOK || !strings.Contains(r.stderr, "nested too deep") {
		t.Fatalf("exit %d, stderr %q; want a failure saying the value nests too deep", r.code, r.stderr)
	}
}

// A guarded key that moved: ssgen set writes it under the guard lock and
// deletes the earlier key with the same fencing token.
func TestSetOfAGuardedMovedKeyDeletesTheEarlierKeyFenced(t *testing.T) {
	url := servertest.New(t).URL()
	sch := filepath.Join(t.TempDir(), "ssgen.yaml")
	if err := os.WriteFile(sch, []byte("version: 1\npackage: p\nlocks:\n  Edit: {path: edit, ttl: 5s}\nkeys:\n  Temp: {path: tempk2, renamed_from: tempk, type: int64, encoding: string, guard: Edit}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, url, "set", "--raw", "tempk", "1").want(t, exitOK, nil)
	run(t, url, "set", "--schema", sch, "tempk2", "2").want(t, exitOK, nil)
	run(t, url, "get", "--raw", "tempk").want(t, exitNegative, ptr(""))
	run(t, url, "get", "--schema", sch, "tempk2", "--quiet").want(t, exitOK, ptr("2\n"))
	run(t, url, "set", "--raw", "tempk", "1").want(t, exitOK, nil)
	run(t, url, "del", "--schema", sch, "tempk2").want(t, exitOK, ptr(""))
	run(t, url, "get", "--raw", "tempk").want(t, exitNegative, ptr(""))
}
