package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReviewActionScript runs the steps of the repository's GitHub Action
// (.github/ssgen-review.sh) in a throwaway git repository: a change that
// only adds a key passes and posts its doc, one that removes a key fails
// with an annotation on the pull request, a stale generated file fails
// check, and a change that leaves the schema alone writes no doc.
func TestReviewActionScript(t *testing.T) {
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	script, err := filepath.Abs("../../.github/ssgen-review.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "ssgen")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	repo := t.TempDir()
	sh := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(schema, msg string) string {
		t.Helper()
		writeGenFile(t, filepath.Join(repo, "plant", "ssgen.yaml"), schema)
		sh(bin, "generate", "--schema", "plant/ssgen.yaml")
		sh("git", "add", "-A")
		sh("git", "commit", "-q", "-m", msg)
		return sh("git", "rev-parse", "HEAD")
	}
	review := func(base string) (code int, stdout string, doc string) {
		t.Helper()
		docFile := filepath.Join(t.TempDir(), "doc.md")
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "SSGEN="+bin, "SSGEN_BASE="+base, "SSGEN_DOC_FILE="+docFile)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code = cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("script: %v\n%s", err, errOut.String())
		}
		d, _ := os.ReadFile(docFile)
		return code, out.String() + errOut.String(), string(d)
	}

	sh("git", "init", "-q", "-b", "main")
	const v1 = `version: 1
package: plant
groups:
  Thermostat:
    path: thermostats/{id}
    params: {id: string}
    keys:
      SetPoint: {path: setPoint, type: float64}
      Reading: {path: reading, type: float64, encoding: string}
`
	base := commit(v1, "base")

	// A compatible change: a new key.
	added := commit(strings.Replace(v1, "      Reading:", "      Mode: {path: mode, type: string, encoding: string}\n      Reading:", 1), "add a key")
	code, out, doc := review(base)
	if code != 0 || strings.Contains(out, "::error") {
		t.Fatalf("a compatible change: exit %d\n%s", code, out)
	}
	if !strings.Contains(doc, "<!-- ssgen-review -->") || !strings.Contains(doc, "<code>plant/ssgen.yaml</code>") ||
		!strings.Contains(doc, "```mermaid") || !strings.Contains(doc, "`Thermostat.Mode`") {
		t.Fatalf("doc of the changed schema:\n%s", doc)
	}

	// A breaking change: a key removed, annotated where it was declared.
	commit(strings.Replace(v1, "      Reading: {path: reading, type: float64, encoding: string}\n", "", 1), "remove a key")
	code, out, _ = review(added)
	if code != 1 || !strings.Contains(out, "::error file=plant/ssgen.yaml,title=ssgen breaking%3A key-removed::key Thermostat.Reading") {
		t.Fatalf("a breaking change: exit %d\n%s", code, out)
	}

	// A generated file edited by hand: check fails, annotated.
	gen := filepath.Join(repo, "plant", "plant_ssgen.go")
	src, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, gen, append(src, []byte("\n// edited\n")...))
	sh("git", "commit", "-q", "-am", "edit generated code")
	head := sh("git", "rev-parse", "HEAD")
	code, out, doc = review(head)
	if code != 1 || !strings.Contains(out, "::error file=plant/plant_ssgen.go,title=ssgen check::plant/plant_ssgen.go is stale") {
		t.Fatalf("a stale generated file: exit %d\n%s", code, out)
	}
	if doc != "" {
		t.Fatalf("no schema changed since %s, yet a doc was written:\n%s", head, doc)
	}

	// A schema whose path starts with '-' is read as a file, not a flag
	// (ssgen doc -o/ssgen.yaml would write a file wherever the pull
	// request says).
	evil := filepath.Join(repo, "-o")
	writeGenFile(t, filepath.Join(evil, "ssgen.yaml"), strings.Replace(v1, "package: plant", "package: evil", 1))
	sh(bin, "generate", "--schema", "./-o/ssgen.yaml")
	sh("git", "add", "--", "-o")
	sh("git", "commit", "-q", "-m", "a schema under -o")
	code, out, doc = review(head)
	if code != 1 || !strings.Contains(doc, "<code>./-o/ssgen.yaml</code>") || !strings.Contains(out, "./-o/ssgen.yaml") {
		t.Fatalf("a schema under -o/: exit %d\n%s\ndoc:\n%s", code, out, doc)
	}

	// A base that does not exist is a usage error, not a pass.
	if code, out, _ := review("no-such-branch"); code != 2 || !strings.Contains(out, "not a revision") {
		t.Fatalf("unknown base: exit %d\n%s", code, out)
	}
	if code, out, _ := review("--output=" + filepath.Join(repo, "x")); code != 2 || !strings.Contains(out, "does not start with '-'") {
		t.Fatalf("a base that is an option: exit %d\n%s", code, out)
	}
}
