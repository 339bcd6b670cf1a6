package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server/servertest"
)

func versionsSchema(v string) string {
	return filepath.Join("..", "..", "internal", "tests", "e2e", "versions", v, "ssgen.yaml")
}

// ssgen shows a value of a versioned type as the version it was stored
// in, labelled by its stamp ("$v" first), since converting it would take
// the package's Go code; a value stored before versioning is the oldest
// version.
func TestShellVerbsShowTheStoredVersionOfAVersionedType(t *testing.T) {
	url := servertest.New(t).URL()
	v1, v2, v2w := versionsSchema("v1"), versionsSchema("v2"), versionsSchema("v2w")
	for _, key := range []string{"versions/setpoint", "versions/setpoint-json"} {
		run(t, url, "set", "--schema", v1, key, `{"fahrenheit": 212, "mode": "cool"}`).want(t, exitOK, nil)
		r := run(t, url, "get", "--schema", v2, key, "--json")
		r.want(t, exitOK, nil)
		if !strings.Contains(r.stdout, `"value":{"$v":1,"fahrenheit":212,"mode":"cool"}`) {
			t.Errorf("%s: get --schema v2 --json printed %q, want the value as version 1", key, r.stdout)
		}
		run(t, url, "get", "--schema", v2, key, "--quiet").want(t, exitOK, ptr("{\n  \"$v\": 1,\n  \"fahrenheit\": 212,\n  \"mode\": \"cool\"\n}\n"))

		// Without a stamp, set writes the newest version (the
		// write_version when there is one)...
		run(t, url, "set", "--schema", v2, key, `{"celsius": 100, "mode": "heat"}`).want(t, exitOK, nil)
		r = run(t, url, "get", "--schema", v2, key, "--json")
		var got struct{ Value map[string]any }
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Value["$v"] != 2.0 || got.Value["celsius"] != 100.0 {
			t.Errorf("%s: after set of version 2, get printed %q (%v)", key, r.stdout, err)
		}
		r = run(t, url, "set", "--schema", v2w, key, `{"celsius": 100, "mode": "heat"}`)
		if r.code != exitUsage || !strings.Contains(r.stderr, "fahrenheit") {
			t.Errorf("%s: set --schema v2w of a version 2 value: exit %d, stderr %q; want a refusal naming fahrenheit", key, r.code, r.stderr)
		}
		// ...and with one, that version.
		run(t, url, "set", "--schema", v2, key, `{"$v": 1, "fahrenheit": 50, "mode": "off"}`).want(t, exitOK, nil)
		r = run(t, url, "get", "--schema", v1, key, "--json")
		if !strings.Contains(r.stdout, `"value":{"fahrenheit":50,"mode":"off"}`) {
			t.Errorf("%s: v1 reads %q after set of version 1", key, r.stdout)
		}
		for _, bad := range []string{`{"$v": 3, "kelvin": 1}`, `{"$v": "1", "fahrenheit": 1, "mode": "off"}`, `{"$v": 1, "celsius": 1, "mode": "off"}`} {
			if r := run(t, url, "set", "--schema", v2, key, bad); r.code != exitUsage {
				t.Errorf("%s: set %s: exit %d, stderr %q; want a refusal", key, bad, r.code, r.stderr)
			}
		}
	}
	// A stamp of a version the schema does not declare is shown as such.
	run(t, url, "set", "versions/setpoint-json", `{"$v":3,"kelvin":1}`).want(t, exitOK, nil)
	r := run(t, url, "get", "--schema", v2, "versions/setpoint-json")
	if r.code != exitUsage || !strings.Contains(r.stderr, "version 3") {
		t.Errorf("get of a version 3 value: exit %d, stderr %q", r.code, r.stderr)
	}
}
