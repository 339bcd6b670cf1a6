package templates_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/templates"
)

// docSchema has a doc at every place the generator writes one: the
// package, a struct and its fields, an enum and its values, top-level and
// group keys and locks, a group and its parameters (and a key parameter,
// which is not written, so the test also covers what is not emitted).
const docSchema = `version: 1
package: hostile
doc: D00
types:
  Level:
    doc: D01
    enum:
      - {value: warn, doc: D02}
      - info
  Reading:
    doc: D03
    fields:
      celsius: {type: float64, doc: D04}
      level: {type: Level, optional: true, doc: D05}
keys:
  Current: {path: current, type: Level, doc: D06}
  Sensor:
    path: sensors/{name}
    params:
      name: {type: string, pattern: "[a-z]+"}
    type: Reading
    doc: D07
locks:
  Leader: {path: leader, ttl: 10s, doc: D08}
groups:
  Site:
    doc: D09
    path: sites/{site}
    params:
      site: {type: string, doc: D10}
    keys:
      Name: {path: name, type: string, guard: Writer, doc: D11}
    locks:
      Writer: {path: writer, ttl: 5s, doc: D12}
`

// docPlaces returns every doc string of a loaded schema, once each.
func docPlaces(s *schema.Schema) []*string {
	var out []*string
	seen := map[*string]bool{}
	add := func(p *string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	params := func(ps []*schema.Param) {
		for _, p := range ps {
			add(&p.Doc)
		}
	}
	add(&s.Doc)
	for _, t := range s.Types {
		add(&t.Doc)
		for _, f := range t.Fields {
			add(&f.Doc)
		}
		for _, v := range t.Values {
			add(&v.Doc)
		}
	}
	for _, g := range s.Groups {
		add(&g.Doc)
		params(g.Params)
	}
	for _, k := range s.AllKeys() {
		add(&k.Doc)
		params(k.Params)
	}
	for _, l := range s.AllLocks() {
		add(&l.Doc)
		params(l.Params)
	}
	return out
}

// hostileDocs are doc texts that tried to leave the comment: the
// reported attacks, every line terminator and character the Go scanner
// or go/build treats specially, and the directive spellings.
var hostileDocs = []string{
	"Alarm severity.\n/**/ func init() { panic(\"x\") } //",
	"Alarm severity.\n//go:generate sh -c \"touch /tmp/pwned\"",
	"//go:generate sh -c \"touch /tmp/pwned\"",
	"/* */ func init() { panic(\"x\") }",
	"/*",
	"*/ func init() { panic(\"x\") } /*",
	"x\n/**/ Evil int `json:\"evil\"` //",
	"x\n/**/ } ; func init() { panic(\"x\") } ; type _ struct { //",
	"a\rfunc init() { panic(\"x\") }",
	"a\r\n/**/ func init() { panic(\"x\") }",
	"a\u2028/**/ func init() { panic(\"x\") }",
	"a\u2029/**/ func init() { panic(\"x\") }",
	"a\u0085/**/ func init() { panic(\"x\") }",
	"a\v/**/ func init() { panic(\"x\") }",
	"a\f/**/ func init() { panic(\"x\") }",
	"NUL\x00here",
	"BOM\ufeffhere",
	"bad \xff\xfe UTF-8",
	"go:build ignore",
	"\n+build ignore\n\n",
	"+build ignore",
	"a\n   +build ignore",
	"a\n\t+build linux,!linux",
	"line evil.go:1",
	"go:linkname evil runtime.evil",
	"export Evil",
	"nolint",
	"\u202e } \u2066// evil\u2069 \u2066",
	"a\n\n\npackage main\n\nfunc init() {}",
	"\tcode block\n\t//go:generate x",
	"# Heading\n- item\n\n  //go:generate x",
	strings.Repeat("w ", 40) + "//go:generate sh -c x",
	strings.Repeat("w ", 40) + "/**/ func init() {}",
	"`\"'\\",
}

func loadDocSchema(t testing.TB) *schema.Schema {
	t.Helper()
	s, err := schema.Load("ssgen.yaml", []byte(docSchema))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func generateOne(t testing.TB, s *schema.Schema) []byte {
	t.Helper()
	files, err := templates.Generate(s, templates.Options{Source: "ssgen.yaml"})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	return files[0].Content
}

// codeTokens scans src without its comments: what the compiler and the
// go command act on. Scanner errors (a NUL, a stray BOM) fail the test.
func codeTokens(t testing.TB, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	file := fset.AddFile("x.go", -1, len(src))
	var s scanner.Scanner
	var errs []string
	s.Init(file, src, func(pos token.Position, msg string) { errs = append(errs, pos.String()+": "+msg) }, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		out = append(out, tok.String()+" "+lit)
	}
	if len(errs) > 0 {
		t.Fatalf("scanner: %v", errs)
	}
	return out
}

// checkOnlyComments asserts that src, generated with hostile docs, is
// benign's code token for token, that every comment is a plain "//" line
// comment (so none is a directive and none a /* */ block), that the file
// parses and that go/build includes it.
func checkOnlyComments(t testing.TB, benign, src []byte) {
	t.Helper()
	if !utf8.Valid(src) || bytes.ContainsAny(src, "\x00\r\v\f\ufeff\u2028\u2029\u202e\u2066") {
		t.Fatalf("the file holds invalid UTF-8, a NUL, a line terminator or a bidi control:\n%s", src)
	}
	if got, want := codeTokens(t, src), codeTokens(t, benign); !slices.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("doc text changed the code at token %d: got %q, want %q\n%s", i, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))], src)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if c.Text != "//" && !strings.HasPrefix(c.Text, "// ") && !strings.HasPrefix(c.Text, "//\t") {
				t.Fatalf("%s: comment %q is not a plain line comment", fset.Position(c.Pos()), c.Text)
			}
			if constraint.IsPlusBuild(c.Text) || constraint.IsGoBuild(c.Text) {
				t.Fatalf("%s: comment %q is a build constraint", fset.Position(c.Pos()), c.Text)
			}
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hostile_ssgen.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := build.Default.MatchFile(dir, "hostile_ssgen.go"); err != nil || !ok {
		t.Fatalf("go/build leaves the file out (%v, %v): a doc became a build constraint\n%s", ok, err, src)
	}
}

func TestDocSchemaWritesEveryDocItHolds(t *testing.T) {
	src := string(generateOne(t, loadDocSchema(t)))
	for i := 0; i <= 12; i++ {
		if d := fmt.Sprintf(" D%02d.\n", i); !strings.Contains(src, d) {
			t.Errorf("%q is not in the generated file: the test would miss a place a doc is written", d)
		}
	}
}

func TestSchemaDocTextOnlyEverBecomesComments(t *testing.T) {
	benign := generateOne(t, loadDocSchema(t))
	for _, doc := range hostileDocs {
		t.Run(fmt.Sprintf("%q", doc), func(t *testing.T) {
			s := loadDocSchema(t)
			for _, p := range docPlaces(s) {
				*p = doc
			}
			checkOnlyComments(t, benign, generateOne(t, s))
		})
	}
}

// TestTheReportedDocAttackFromYAML is issue #25's schema as a reviewer
// would see it: a doc that declared init() and one that added a field.
func TestTheReportedDocAttackFromYAML(t *testing.T) {
	benign := generateOne(t, loadDocSchema(t))
	hostile := strings.NewReplacer(
		"doc: D01", `doc: "Alarm severity.\n/**/ func init() { panic(\"x\") } //"`,
		"doc: D02", `doc: "w\n//go:generate sh -c \"touch /tmp/pwned\""`,
		"doc: D04", "doc: \"x\\n/**/ Evil int `json:\\\"evil\\\"` //\"",
		"doc: D11", `doc: "k\r/* */ var _ = 1"`,
	).Replace(docSchema)
	s, err := schema.Load("ssgen.yaml", []byte(hostile))
	if err != nil {
		t.Fatal(err)
	}
	src := generateOne(t, s)
	checkOnlyComments(t, benign, src)
	if !bytes.Contains(src, []byte("// /**/ func init() { panic(\"x\") } //.")) {
		t.Errorf("the doc text is not kept as comment text:\n%s", src)
	}
}

func TestGenerateRefusesASourceThatWouldBreakItsCommentLine(t *testing.T) {
	s := loadDocSchema(t)
	for _, src := range []string{"a\nb.yaml", "a\rb.yaml", "a\u2028b.yaml", "a\x00b.yaml", "\xff.yaml"} {
		if _, err := templates.Generate(s, templates.Options{Source: src}); err == nil {
			t.Errorf("source %q was accepted", src)
		}
	}
}

func FuzzSchemaDocText(f *testing.F) {
	for _, d := range hostileDocs {
		f.Add(d)
	}
	benign := generateOne(f, loadDocSchema(f))
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 4096 {
			return
		}
		s := loadDocSchema(t)
		for _, p := range docPlaces(s) {
			*p = doc
		}
		checkOnlyComments(t, benign, generateOne(t, s))
	})
}

// TestSchemaStringsInCodeAreQuotedLiterals covers the other schema text
// that reaches the code: enum values, path literals and patterns become
// Go string literals holding exactly that text.
func TestSchemaStringsInCodeAreQuotedLiterals(t *testing.T) {
	s, err := schema.Load("ssgen.yaml", []byte(`version: 1
package: lit
types:
  Level:
    enum: ["a\"b`+"`"+`c\\d*/e", "//go:x", {value: "\u2028\n", go_name: LevelLS}]
keys:
  K:
    path: "k\"`+"`"+`\\/*/x/{p}"
    params:
      p: {type: string, pattern: "[\"`+"`"+`]+|\\n|/\\*"}
    type: Level
`))
	if err != nil {
		t.Fatal(err)
	}
	src := generateOne(t, s)
	f, err := parser.ParseFile(token.NewFileSet(), "lit.go", src, 0)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	lits := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
			v, err := strconv.Unquote(l.Value)
			if err != nil {
				t.Fatal(err)
			}
			lits[v] = true
		}
		return true
	})
	for _, want := range []string{"a\"b`c\\d*/e", "//go:x", "\u2028\n", "k\"`\\/*/x/", "^(?:[\"`]+|\\n|/\\*)$"} {
		if !lits[want] {
			t.Errorf("no string literal holds %q\n%s", want, src)
		}
	}
}

// TestOnlyCommentsGoWritesCommentsToJennifer keeps every comment on the
// one path that makes it safe: jennifer's Comment writes text that begins
// with "//" or "/*" verbatim, so an emitter calling it with schema text
// would bring the attack back.
func TestOnlyCommentsGoWritesCommentsToJennifer(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\.(Comment|Commentf|HeaderComment|PackageComment)\(`)
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || p == "comments.go" {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if !call.MatchString(line) {
				continue
			}
			// The header's two fixed lines and commentLines' output.
			if p == "header.go" && (strings.Contains(line, "HeaderComment(GeneratedHeader)") ||
				strings.Contains(line, "HeaderComment(sourcePrefix + opts.Source)") || strings.Contains(line, "PackageComment(line)")) {
				continue
			}
			t.Errorf("%s:%d: %s: write comments with comment() or commentLines()", p, i+1, strings.TrimSpace(line))
		}
	}
}
