package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
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
