package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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

// TestKeysLimitPagesWithoutLossOrRepeat walks whole stores in --limit
// steps, each resumed with the cursor the step before printed: a store
// within one SCAN page, and one whose pages (500 keys) end inside a step.
func TestKeysLimitPagesWithoutLossOrRepeat(t *testing.T) {
	for _, tc := range []struct {
		keys, limit int
		json        bool
	}{{14, 3, false}, {1514, 3, false}, {1514, 7, true}} {
		t.Run(fmt.Sprintf("%d keys by %d", tc.keys, tc.limit), func(t *testing.T) {
			srv := servertest.New(t)
			url := srv.URL()
			var want []string
			for i := range tc.keys {
				k := fmt.Sprintf("dev/%04d", i)
				want = append(want, k)
				if err := srv.Engine().Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			cursor := ""
			for step := 0; ; step++ {
				args := []string{"keys", "dev/*", "--limit", fmt.Sprint(tc.limit)}
				if cursor != "" {
					args = append(args, "--cursor", cursor)
				}
				if tc.json {
					args = append(args, "--json")
				}
				r := run(t, url, args...)
				r.want(t, exitOK, nil)
				var page []string
				cursor = ""
				for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					if !tc.json {
						page = append(page, line)
						continue
					}
					var m map[string]string
					if err := json.Unmarshal([]byte(line), &m); err != nil {
						t.Fatalf("line %q: %v", line, err)
					}
					if c, ok := m["cursor"]; ok {
						cursor = c
					} else {
						page = append(page, m["key"])
					}
				}
				if !tc.json {
					if _, c, ok := strings.Cut(r.stderr, "resume with --cursor "); ok {
						var err error
						if cursor, err = strconv.Unquote(strings.TrimSpace(c)); err != nil {
							t.Fatalf("stderr %q: %v", r.stderr, err)
						}
					}
				}
				got = append(got, page...)
				if wantPage := want[min(step*tc.limit, len(want)):min((step+1)*tc.limit, len(want))]; !slices.Equal(page, wantPage) {
					t.Fatalf("step %d listed %q, want %q", step, page, wantPage)
				}
				if cursor == "" {
					break
				}
				if step > len(want) {
					t.Fatal("the cursor never ends")
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("the walk listed %d keys, want %d", len(got), len(want))
			}
		})
	}
}

func TestKeysRefusesACursorOfAnotherGlob(t *testing.T) {
	url := testStore(t)
	for _, k := range []string{"a/1", "a/2", "b/1"} {
		run(t, url, "set", k, "v").want(t, exitOK, nil)
	}
	r := run(t, url, "keys", "a/*", "--limit", "1", "--json")
	r.want(t, exitOK, nil)
	var m map[string]string
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil || m["cursor"] == "" {
		t.Fatalf("no cursor in %q", r.stdout)
	}
	bad := run(t, url, "keys", "b/*", "--cursor", m["cursor"])
	bad.want(t, exitUsage, ptr(""))
	if !strings.Contains(bad.stderr, "another GLOB") {
		t.Fatalf("stderr %q", bad.stderr)
	}
	run(t, url, "keys", "a/*", "--cursor", "garbage").want(t, exitUsage, ptr(""))
	run(t, url, "keys", "a/*", "--cursor", m["cursor"]).want(t, exitOK, ptr("a/2\n"))
}

func TestKeysRefusesBadArguments(t *testing.T) {
	url := testStore(t)
	run(t, url, "keys", "a*", "b*").want(t, exitUsage, ptr(""))
	run(t, url, "keys", "--limit", "-1").want(t, exitUsage, ptr(""))
	run(t, url, "keys", "").want(t, exitUsage, ptr(""))
}
