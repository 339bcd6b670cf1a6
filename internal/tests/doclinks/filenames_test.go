package doclinks

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// repoPath is a path in the repository: a top-level directory, then
	// more elements (a * in the last one stands for any text).
	repoPath = regexp.MustCompile(`^\.?[A-Za-z0-9_-]+(?:/[A-Za-z0-9_.*-]+)+/?$`)
	// goFileName is a Go file named on its own, not a pattern of names
	// (<package>_ssgen.go, *_test.go) nor part of a path.
	goFileName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./<>*{}-])([A-Za-z0-9][A-Za-z0-9_]*\.go)\b`)
	// lineSuffix is a line or line:column after a path (store.go:82).
	lineSuffix = regexp.MustCompile(`:[0-9][0-9:~-]*$`)
	// goIdent is a package path's exported name (internal/schemaval.Evolution).
	goIdent = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)
)

// TestDocumentsNameFilesThatExist checks the file names the user
// references state as holding today: every backticked repository path in
// README.md and docs/*.md must exist, and every Go file they name on its
// own (in backticks or in a code block such as architecture.md's layout)
// must exist somewhere in the repository.
func TestDocumentsNameFilesThatExist(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 5 {
		t.Fatalf("found only %d documents", len(files))
	}
	names := goFileNames(t)
	tops := topLevel(t)
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		fenced := false
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if !fenced {
				for _, span := range codeSpan.FindAllString(line, -1) {
					if msg := checkPath(tops, strings.Trim(span, "`")); msg != "" {
						t.Errorf("%s:%d: %s", rel(file), n, msg)
					}
				}
			}
			for _, m := range goFileName.FindAllStringSubmatch(line, -1) {
				if !names[m[1]] {
					t.Errorf("%s:%d: %s: no Go file of that name in the repository", rel(file), n, m[1])
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoCommentsNameFilesThatExist checks the Go files named in Go
// comments: each must be in the commenting file's directory, or be a
// repository path, or (a file of another package) exist somewhere. Test
// inputs (testdata) are left out.
func TestGoCommentsNameFilesThatExist(t *testing.T) {
	names := goFileNames(t)
	tops := topLevel(t)
	for _, file := range walk(t, ".go") {
		if strings.Contains(filepath.ToSlash(file), "/testdata/") {
			continue // inputs of tests: their comments may name anything
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			at := strings.Index(line, "//")
			if at < 0 || strings.Contains(line[:at], `"`) {
				continue // no comment, or // inside a string
			}
			comment := line[at+2:]
			for _, m := range goFileName.FindAllStringSubmatch(comment, -1) {
				if !names[m[1]] {
					t.Errorf("%s:%d: %s: no Go file of that name in the repository", rel(file), i+1, m[1])
				}
			}
			for _, word := range strings.Fields(comment) {
				word = strings.Trim(word, "`()[],;:.'\"")
				if !strings.HasSuffix(word, ".go") && !strings.HasSuffix(word, ".md") {
					continue
				}
				if msg := checkPath(tops, word); msg != "" {
					t.Errorf("%s:%d: %s", rel(file), i+1, msg)
				}
			}
		}
	}
}

// checkPath reports a repository path that names nothing; text that is no
// path, or whose first element is no top-level directory of the repository
// (a user's path, a URL's), is not checked.
func checkPath(tops map[string]bool, s string) string {
	s = lineSuffix.ReplaceAllString(s, "")
	s, _, _ = strings.Cut(s, "#")
	if !repoPath.MatchString(s) || goIdent.MatchString(s) || !tops[strings.SplitN(s, "/", 2)[0]] {
		return ""
	}
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(s, "/"))))
	if err != nil || len(matches) == 0 {
		return s + ": no such path in the repository"
	}
	return ""
}

// topLevel returns the names of the repository's top-level directories.
func topLevel(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			out[e.Name()] = true
		}
	}
	return out
}

// goFileNames returns the base names of the repository's Go files.
func goFileNames(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range walk(t, ".go") {
		out[filepath.Base(f)] = true
	}
	return out
}
