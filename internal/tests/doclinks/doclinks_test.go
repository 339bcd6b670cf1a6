package doclinks

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's top directory, from this package's.
const root = "../../.."

var (
	// mdLink is an inline Markdown link or image: [text](target "title").
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// goDocRef is a reference to a document from a Go comment.
	goDocRef = regexp.MustCompile(`\bdocs/[A-Za-z0-9_.-]+\.md(?:#[A-Za-z0-9_-]+)?`)
	// codeSpan is inline code, where brackets are not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
)

func TestMarkdownLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // file -> its heading anchors
	files := walk(t, ".md")
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files under %s", len(files), root)
	}
	for _, file := range files {
		for _, l := range links(t, file) {
			if err := resolve(anchors, file, l.target); err != nil {
				t.Errorf("%s:%d: link %q: %v", rel(file), l.line, l.target, err)
			}
		}
	}
}

func TestGoCommentsReferToDocumentsThatExist(t *testing.T) {
	anchors := map[string]map[string]bool{}
	for _, file := range walk(t, ".go") {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if !strings.Contains(line, "//") {
				continue
			}
			for _, ref := range goDocRef.FindAllString(line[strings.Index(line, "//"):], -1) {
				if err := resolve(anchors, filepath.Join(root, "x"), ref); err != nil {
					t.Errorf("%s:%d: %q: %v", rel(file), i+1, ref, err)
				}
			}
		}
	}
}

// walk lists the files under root with the suffix, leaving out hidden
// directories and fuzz corpora.
func walk(t *testing.T, suffix string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, suffix) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type link struct {
	target string
	line   int
}

// links returns the link targets of a Markdown file, outside code blocks
// and code spans.
func links(t *testing.T, file string) []link {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []link
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			out = append(out, link{m[1], n})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// resolve checks one link target of the file from: a path relative to the
// file's directory, or to the repository root for docs/... references,
// with an optional #fragment naming a heading.
func resolve(anchors map[string]map[string]bool, from, target string) error {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return nil // outside the repository: not checked here
	}
	path, frag, _ := strings.Cut(target, "#")
	file := from
	if path != "" {
		file = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("no such file in the repository (%s)", rel(file))
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return nil
	}
	a, ok := anchors[file]
	if !ok {
		var err error
		if a, err = headingAnchors(file); err != nil {
			return err
		}
		anchors[file] = a
	}
	if !a[frag] {
		return fmt.Errorf("%s has no heading with anchor #%s", rel(file), frag)
	}
	return nil
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, spaces to '-', punctuation other than '-' and
// '_' dropped, a repeated anchor numbered -1, -2, ...
func headingAnchors(file string) (map[string]bool, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range bytes.Split(src, []byte("\n")) {
		s := string(line)
		if strings.HasPrefix(strings.TrimSpace(s), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(s, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(s, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			out[fmt.Sprintf("%s-%d", anchor, n)] = true
		} else {
			out[anchor] = true
		}
		seen[anchor]++
	}
	return out, nil
}

func rel(path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}
