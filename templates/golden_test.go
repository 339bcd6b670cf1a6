package templates_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/golden"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/templates"
)

// goldenCase is a directory holding ssgen.yaml and the expected output.
type goldenCase struct {
	name string
	dir  string
}

// goldenCases are the testdata cases plus the package the behaviour tests
// drive, whose generated file must stay fresh too.
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	for _, e := range ents {
		dir := filepath.Join("testdata", e.Name())
		if _, err := os.Stat(filepath.Join(dir, "ssgen.yaml")); err == nil {
			out = append(out, goldenCase{e.Name(), dir})
		}
	}
	out = append(out,
		goldenCase{"e2e", filepath.Join("..", "internal", "tests", "e2e")},
		// Two versions of one schema, every evolution declaration in v2.
		goldenCase{"evolve-v1", filepath.Join("..", "internal", "tests", "e2e", "evolve", "v1")},
		goldenCase{"evolve-v2", filepath.Join("..", "internal", "tests", "e2e", "evolve", "v2")},
		// A versioned type: before versioning, version 2, and version 2
		// still writing version 1 (write_version).
		goldenCase{"versions-v1", filepath.Join("..", "internal", "tests", "e2e", "versions", "v1")},
		goldenCase{"versions-v2", filepath.Join("..", "internal", "tests", "e2e", "versions", "v2")},
		goldenCase{"versions-v2w", filepath.Join("..", "internal", "tests", "e2e", "versions", "v2w")},
	)
	return out
}

func generate(t testing.TB, dir string) []templates.File {
	t.Helper()
	s, err := schema.LoadFile(filepath.Join(dir, "ssgen.yaml"))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	files, err := templates.Generate(s, templates.Options{Source: "ssgen.yaml"})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return files
}

func TestGeneratedFilesMatchTheGoldenOutput(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			files := generate(t, c.dir)
			want := map[string]bool{}
			for _, f := range files {
				want[f.Name] = true
				golden.Check(t, filepath.Join(c.dir, f.Name), f.Content)
			}
			// Expected files the generator no longer writes are stale too.
			old, _ := filepath.Glob(filepath.Join(c.dir, "*_ssgen.go"))
			for _, p := range old {
				if !want[filepath.Base(p)] {
					if golden.Updating() {
						os.Remove(p)
						continue
					}
					t.Errorf("%s is not generated any more", p)
				}
			}
		})
	}
}

func TestGeneratingTwiceGivesIdenticalBytes(t *testing.T) {
	for _, c := range goldenCases(t) {
		a, b := generate(t, c.dir), generate(t, c.dir)
		if len(a) != len(b) {
			t.Fatalf("%s: %d files, then %d", c.name, len(a), len(b))
		}
		for i := range a {
			if a[i].Name != b[i].Name || !bytes.Equal(a[i].Content, b[i].Content) {
				t.Errorf("%s: %s differs between two runs", c.name, a[i].Name)
			}
		}
	}
}

func TestGeneratedFilesCarryTheHeaderAndTheirSource(t *testing.T) {
	for _, c := range goldenCases(t) {
		for _, f := range generate(t, c.dir) {
			if !strings.HasPrefix(string(f.Content), templates.GeneratedHeader+"\n// source: ssgen.yaml\n") {
				t.Errorf("%s/%s: header missing", c.name, f.Name)
			}
			if !templates.Owns(f.Content, "ssgen.yaml") || templates.Owns(f.Content, "other.yaml") {
				t.Errorf("%s/%s: ownership not recognised", c.name, f.Name)
			}
		}
	}
}

// TestGoldenOutputCompilesAndVets builds every expected file in a
// throwaway module that points at this repository, the way a user's
// module would use it, and runs go vet on it.
func TestGoldenOutputCompilesAndVets(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles generated code with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	gomod := "module example.com/golden\n\ngo 1.24\n\nrequire github.com/ssgen/ssgen v0.0.0\n\nreplace github.com/ssgen/ssgen => " + root + "\n"
	write(t, filepath.Join(tmp, "go.mod"), []byte(gomod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tmp, "go.sum"), sum)
	copyGo(t, filepath.Join("testdata", "support", "units"), filepath.Join(tmp, "units"))
	for _, c := range goldenCases(t) {
		if strings.HasPrefix(c.dir, filepath.Join("..", "internal")+string(filepath.Separator)) {
			continue // part of this module; go vet ./... covers it
		}
		copyGo(t, c.dir, filepath.Join(tmp, c.name))
	}
	cmd := exec.Command(goCmd, "vet", "./...")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet on the golden output: %v\n%s", err, out)
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyGo(t *testing.T, from, to string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(from, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(to, filepath.Base(p)), data)
	}
}
