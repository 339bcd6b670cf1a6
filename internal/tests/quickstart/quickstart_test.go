package quickstart

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/server/servertest"
)

// TestReadmeQuickStart follows README.md's quick start in a new module
// outside the repository: it runs the README's commands and writes its
// files as they stand, then runs the program against an in-process state
// store and compares what it prints with the README's output block.
//
// It runs in the user's Go environment (GOPROXY, GOSUMDB, GOMODCACHE as
// they are), so that it needs what a user needs and nothing more: on a
// machine with an empty module cache, the README's "go mod tidy" downloads
// the modules ssgen depends on, as it does for the user, instead of the
// test depending on a cache some other command filled. Three variables
// are set: SSGEN_CLONE, which the README asks the user to set, names this
// checkout (the version under test); GOWORK=off, so that a workspace
// around the temporary directory cannot interfere; GOTOOLCHAIN=local, so
// that the Go under test builds it.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module from scratch; skipped with -short")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseSteps(readme)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "SSGEN_CLONE="+root)
	var srvURL, output, printed string
	ran := 0
	for _, st := range steps {
		switch st.kind {
		case kindFile:
			path := filepath.Join(dir, filepath.FromSlash(st.arg))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(st.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case kindServe:
			// The README starts a state store in another terminal; the
			// test starts one in its own process and points the program
			// at it instead.
			srvURL = servertest.New(t).URL()
		case kindOutput:
			output = st.body
		case kindRun:
			for _, line := range commands(st.body) {
				if srvURL != "" {
					line = strings.ReplaceAll(line, "mqtt://127.0.0.1:1883", srvURL)
				}
				out := run(ctx, t, dir, env, line)
				ran++
				if strings.HasPrefix(line, "go run ") {
					printed = out
				}
			}
		}
	}
	if ran < 4 || srvURL == "" {
		t.Fatalf("the README's quick start has %d commands and serve step %v: its markers are missing", ran, srvURL != "")
	}
	if output == "" || printed != output {
		t.Fatalf("the program printed %q; the README's output block says %q", printed, output)
	}
	if _, err := os.Stat(filepath.Join(dir, "thermostat", "thermostat_ssgen.go")); err != nil {
		t.Fatalf("go generate wrote no code: %v", err)
	}
}

// run runs one shell line of the README in dir and returns its stdout.
func run(ctx context.Context, t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, stdout.String(), stderr.String())
	}
	t.Logf("%s (%s)", line, time.Since(start).Round(time.Millisecond))
	return stdout.String()
}
