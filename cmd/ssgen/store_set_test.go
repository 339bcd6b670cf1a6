package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSetValueFormats(t *testing.T) {
	url := testStore(t)
	path := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(path, []byte("from\na file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string // hex of the stored value
	}{
		{"text", "", []string{"set", "k", "text value"}, "746578742076616c7565"},
		{"hex", "", []string{"set", "k", "0001ff", "--hex"}, "0001ff"},
		{"empty hex", "", []string{"set", "k", "", "--hex"}, ""},
		{"file", "", []string{"set", "k", "--file", path}, "66726f6d0a612066696c650a"},
		{"stdin", "\x00in", []string{"set", "k", "--file", "-"}, "00696e"},
		{"value starting with a dash", "", []string{"set", "k", "--", "-5"}, "2d35"},
		{"hex key", "", []string{"set", "6b", "x", "--key-hex"}, "78"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runIn(t, tt.stdin, nil, withBroker(url, tt.args)...).want(t, exitOK, nil)
			run(t, url, "get", "k", "--hex").want(t, exitOK, ptr(tt.want+"\n"))
		})
	}
}

func TestSetConditions(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "cond", "a", "--nx").want(t, exitOK, nil)
	r := run(t, url, "set", "cond", "b", "--nx")
	r.want(t, exitNegative, ptr(""))
	if !strings.Contains(r.stderr, "condition not met") {
		t.Fatalf("stderr %q", r.stderr)
	}
	run(t, url, "set", "cond", "a", "--nex", "--px", "10s").want(t, exitOK, nil)
	run(t, url, "set", "cond", "b", "--nex").want(t, exitNegative, ptr(""))
	run(t, url, "get", "cond").want(t, exitOK, ptr("a\n"))
}

func TestSetFencingToken(t *testing.T) {
	url := testStore(t)
	lock := run(t, url, "set", "lk", "me", "--nex", "--px", "10000")
	lock.want(t, exitOK, nil)
	token := strings.TrimSpace(lock.stdout)
	run(t, url, "set", "guarded", "1", "--fencing-token", token, "--persist").want(t, exitOK, nil)
	// Once fenced, an unfenced write is refused: a negative answer.
	run(t, url, "set", "guarded", "2").want(t, exitNegative, ptr(""))
	run(t, url, "del", "guarded").want(t, exitNegative, ptr(""))
	run(t, url, "del", "guarded", "--fencing-token", token).want(t, exitOK, ptr(""))
}

func TestParsePX(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10s", 10 * time.Second, true},
		{"1500ms", 1500 * time.Millisecond, true},
		{"250", 250 * time.Millisecond, true},
		{"1m30s", 90 * time.Second, true},
		{"0", 0, false},
		{"-5", 0, false},
		{"-1s", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := parsePX(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parsePX(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// exampleSchema is the schema the thermostat example ships, the one the
// docs' typed examples use.
const exampleSchema = "../../examples/thermostat/thermostat/ssgen.yaml"

func TestSetWarnsOfAnUndeclaredKeyAndStrictRefusesIt(t *testing.T) {
	url := testStore(t)
	schema := []string{"--schema", exampleSchema}
	r := run(t, url, append([]string{"set", "thermostats/Kitchen/reading", "20.4"}, schema...)...)
	r.want(t, exitOK, nil)
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "Thermostat.Reading") ||
		!strings.Contains(r.stderr, `"Kitchen" does not match {id}'s pattern`) {
		t.Fatalf("stderr %q: want one line naming Thermostat.Reading and the pattern", r.stderr)
	}
	run(t, url, "get", "thermostats/Kitchen/reading", "--raw").want(t, exitOK, ptr("20.4\n"))

	strict := run(t, url, append([]string{"set", "thermostats/Kitchen/setPoint", "1", "--strict"}, schema...)...)
	strict.want(t, exitUsage, ptr(""))
	if !strings.Contains(strict.stderr, "Thermostat.SetPoint") || !strings.Contains(strict.stderr, "nothing was sent") {
		t.Fatalf("stderr %q", strict.stderr)
	}
	run(t, url, "get", "thermostats/Kitchen/setPoint", "--raw").want(t, exitNegative, ptr(""))

	// A declared key gets no warning; --raw writes without one; --strict
	// needs a schema.
	ok := run(t, url, append([]string{"set", "thermostats/kitchen/reading", "20.4", "--strict"}, schema...)...)
	ok.want(t, exitOK, nil)
	if ok.stderr != "" {
		t.Fatalf("a declared key warned: %q", ok.stderr)
	}
	if raw := run(t, url, "set", "thermostats/Kitchen/reading", "1", "--raw"); raw.code != exitOK || raw.stderr != "" {
		t.Fatalf("--raw: %+v", raw)
	}
	run(t, url, "set", "k", "v", "--strict").want(t, exitUsage, ptr(""))

	// del and vdel write too: the same warning, the same --strict.
	refused := run(t, url, append([]string{"del", "thermostats/Kitchen/reading", "--strict"}, schema...)...)
	refused.want(t, exitUsage, ptr(""))
	run(t, url, "get", "thermostats/Kitchen/reading", "--raw").want(t, exitOK, ptr("1\n"))
	for _, verb := range [][]string{{"vdel", "thermostats/Kitchen/reading", "1"}, {"del", "thermostats/Kitchen/reading"}} {
		run(t, url, "set", "thermostats/Kitchen/reading", "1", "--raw").want(t, exitOK, nil)
		r := run(t, url, append(verb, schema...)...)
		if r.code == exitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "ssgen "+verb[0]+": warning:") || !strings.Contains(r.stderr, "Thermostat.Reading") {
			t.Errorf("%s: exit %d, stderr %q", verb[0], r.code, r.stderr)
		}
	}
	// The warning comes before the request: it says what is sent, not
	// that the delete happened (here there was nothing to delete).
	gone := run(t, url, append([]string{"del", "thermostats/Kitchen/nothing"}, schema...)...)
	if gone.code != exitNegative || !strings.Contains(gone.stderr, "sending the delete anyway") || strings.Contains(gone.stderr, "deleted") {
		t.Errorf("del of a missing undeclared key: exit %d, stderr %q", gone.code, gone.stderr)
	}
}

// TestDocsTypedExamplesNameDeclaredKeys: every thermostat key a shell
// example of the README or docs/cli.md writes or reads is declared by the
// example's schema (typed examples must not hit the undeclared warning).
func TestDocsTypedExamplesNameDeclaredKeys(t *testing.T) {
	url := testStore(t)
	example := regexp.MustCompile(`ssgen (?:set|get|watch) (thermostats/[^ ` + "`" + `]+)`)
	n := 0
	for _, doc := range []string{"../../README.md", "../../docs/cli.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range example.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "Kitchen") { // the documented warning
				continue
			}
			n++
			r := run(t, url, "set", m[1], `{"celsius":21.5,"mode":"heat"}`, "--schema", exampleSchema, "--strict")
			if r.code == exitUsage && strings.Contains(r.stderr, "not declared") {
				t.Errorf("%s: %s is not declared by the example's schema: %s", doc, m[1], r.stderr)
			}
		}
	}
	if n == 0 {
		t.Fatal("no typed example found")
	}
}

// TestSnapshotsDocFixtureFitsTheExampleSchema: the hand-written fixture of
// docs/snapshots.md loads, and each of its keys the thermostat example
// declares holds a value of the declared type.
func TestSnapshotsDocFixtureFitsTheExampleSchema(t *testing.T) {
	doc, err := os.ReadFile("../../docs/snapshots.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "A hand-written fixture")
	_, rest, _ = strings.Cut(rest, "```json\n")
	fixture, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("no fixture in docs/snapshots.md")
	}
	file := filepath.Join(t.TempDir(), "fixture.json")
	writeTestFile(t, file, []byte(fixture))
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--seed", file)
	if !sp.lines.Scan() {
		t.Fatalf("serve --seed refused the fixture:\n%s", sp.stderr)
	}
	url := sp.lines.Text()
	declared := 0
	for _, key := range regexp.MustCompile(`"key": "([^"]+)"`).FindAllStringSubmatch(fixture, -1) {
		r := run(t, url, "get", key[1], "--schema", exampleSchema, "--quiet")
		if r.code != exitOK {
			t.Errorf("%s: %s", key[1], r.stderr)
		}
		if strings.HasPrefix(key[1], "thermostats/") {
			declared++
		}
	}
	if declared == 0 {
		t.Error("the fixture has no key of the example's schema")
	}
}
