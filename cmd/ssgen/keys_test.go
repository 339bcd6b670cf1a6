package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestKeysListsMatchingKeysAndResumesFromACursor(t *testing.T) {
	srv := servertest.New(t)
	url := srv.URL()
	var want []string
	for i := range 1200 { // more than one page (500 keys)
		k := fmt.Sprintf("dev/%04d", i)
		want = append(want, k)
		if err := srv.Engine().Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Engine().Put([]byte("two words"), []byte("v"), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}

	all := run(t, url, "keys", "dev/*")
	all.want(t, exitOK, nil)
	got := strings.Fields(all.stdout)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("keys dev/* listed %d keys, want %d", len(got), len(want))
	}
	run(t, url, "keys", "two*").want(t, exitOK, ptr("\"two words\"\n"))
	run(t, url, "keys", "two*", "--key-hex").want(t, exitOK, ptr("74776f20776f726473\n"))

	// --limit stops early and names the cursor; --cursor resumes without
	// skipping a key.
	first := run(t, url, "keys", "dev/*", "--limit", "700", "--json")
	first.want(t, exitOK, nil)
	seen := map[string]bool{}
	var cursor string
	for _, line := range strings.Split(strings.TrimSpace(first.stdout), "\n") {
		var m map[string]string
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if c, ok := m["cursor"]; ok {
			cursor = c
		} else {
			seen[m["key"]] = true
		}
	}
	if len(seen) != 700 || cursor == "" {
		t.Fatalf("--limit 700 listed %d keys, cursor %q", len(seen), cursor)
	}
	rest := run(t, url, "keys", "dev/*", "--cursor", cursor)
	rest.want(t, exitOK, nil)
	for _, k := range strings.Fields(rest.stdout) {
		seen[k] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("resumed listing reached %d of %d keys", len(seen), len(want))
	}
	text := run(t, url, "keys", "dev/*", "--limit", "1")
	text.want(t, exitOK, nil)
	if !strings.Contains(text.stderr, "--cursor ") {
		t.Fatalf("stderr %q does not name the cursor", text.stderr)
	}
}

func TestKeysRefusesBadArguments(t *testing.T) {
	url := testStore(t)
	run(t, url, "keys", "a*", "b*").want(t, exitUsage, ptr(""))
	run(t, url, "keys", "--limit", "-1").want(t, exitUsage, ptr(""))
	run(t, url, "keys", "").want(t, exitUsage, ptr(""))
}
