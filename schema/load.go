// Package schema loads an ssgen.yaml file into a validated model, reporting
// every problem as "file:line:col: message", and compares two versions of
// a schema for changes that break stored data or callers.
//
// The file format is described in docs/schema.md and, for editors, by the
// JSON Schema in JSONSchema.
package schema

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/suggest"
)

// LoadFile reads and loads the schema file at filename. Read errors are
// returned as they are; schema problems as an ErrorList.
func LoadFile(filename string) (*Schema, error) {
	src, err := os.ReadFile(filename)
	if err != nil {
		return nil, err
	}
	return Load(filename, src)
}

// Load parses and validates a schema. filename is used in positions only.
// On failure the error is an ErrorList holding every problem found, sorted
// by position, and the returned schema is nil.
func Load(filename string, src []byte) (*Schema, error) {
	l := &loader{file: filename, s: &Schema{Filename: filename}}
	l.load(src)
	l.errs.sort()
	if err := l.errs.err(); err != nil {
		return nil, err
	}
	return l.s, nil
}

type loader struct {
	file string
	s    *Schema
	errs ErrorList

	types map[string]*TypeDef // by name, once every type is declared
	// steps counts the work of the checks that compare declarations with
	// each other (index nodes visited, paths compared), for the test that
	// keeps it about linear in the number of keys.
	steps   int
	targets *grantTargets // what a grant may name, once all are decoded
	// defaults are the fields' default values, checked against the
	// fields' types once every type is declared.
	defaults []pendingDefault
}

// typeDef is s.Type without a pass over every type for each reference.
func (l *loader) typeDef(name string) *TypeDef {
	if l.types == nil {
		return l.s.Type(name)
	}
	return l.types[name]
}

func (l *loader) pos(n *yaml.Node) Pos { return Pos{Filename: l.file, Line: n.Line, Col: n.Column} }

func (l *loader) errorf(n *yaml.Node, format string, a ...any) { l.errs.add(l.pos(n), format, a...) }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (l *loader) load(src []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		// yaml reports syntax errors with a line at best; point at its
		// first column, or at the top of the file when there is none.
		p := Pos{Filename: l.file, Line: 1, Col: 1}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if line, col, ok := offendingLine(src, msg); ok {
			p.Line, p.Col = line, col
		}
		l.errs.add(p, "invalid YAML: %s", msg)
		return
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		l.errs.add(Pos{Filename: l.file, Line: 1, Col: 1}, "empty schema: want at least \"version: 1\" and \"package\"")
		return
	}
	root := doc.Content[0]
	// Aliases could expand exponentially as the model is built; a schema
	// meant for review gains nothing from them.
	if l.rejectAliases(root) {
		return
	}
	l.top(root)
}

// offendingLine's work is quadratic in the file's lines: it searches files
// of schema size only.
const (
	maxLocateLines = 1000
	maxLocateBytes = 64 << 10
)

// offendingLine finds the line a YAML syntax error is on. yaml reports the
// line of the enclosing construct (the mapping a bad key sits in), not of
// the bad text, so this parses ever longer prefixes of whole lines: a
// prefix ending before the error parses (a YAML document cut after a line
// is still YAML, unless it cuts a multi-line value in two), and the first
// line from which every prefix fails is the offending one. The column is
// its first character that is not a space (a tab, which YAML refuses as
// indentation, counts), or for "mapping values are not allowed" the
// second colon of "a: b: c". false when src is too long to search or no
// prefix fails.
func offendingLine(src []byte, msg string) (line, col int, ok bool) {
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) > maxLocateLines || len(src) > maxLocateBytes {
		return 0, 0, false
	}
	var doc yaml.Node
	first := 0 // 1-based line from which every prefix so far failed; 0: none
	prefix := 0
	for i, ln := range lines {
		prefix += len(ln)
		if yaml.Unmarshal(src[:prefix], &doc) != nil {
			if first == 0 {
				first = i + 1
			}
		} else {
			first = 0
		}
	}
	if first == 0 {
		return 0, 0, false
	}
	text := lines[first-1]
	col = len(text) - len(strings.TrimLeft(text, " ")) + 1
	if strings.TrimSpace(text) == "" {
		col = 1
	}
	// "a: b: c": the second colon is the one out of place.
	if strings.Contains(msg, "mapping values are not allowed") {
		if i := strings.Index(text[col-1:], ": "); i >= 0 {
			if j := strings.Index(text[col-1+i+2:], ":"); j >= 0 {
				col += i + 2 + j
			}
		}
	}
	return first, col, true
}

func (l *loader) rejectAliases(n *yaml.Node) bool {
	found := false
	if n.Kind == yaml.AliasNode {
		l.errorf(n, "YAML aliases are not supported; write the value out")
		return true
	}
	for _, c := range n.Content {
		if l.rejectAliases(c) {
			found = true
		}
	}
	return found
}

// pair is one key: value entry of a YAML mapping.
type pair struct {
	key, val *yaml.Node
	name     string
}

// mapping returns the entries of n in order, reporting a non-mapping node,
// duplicate keys and, when allowed is not nil, keys not in allowed. what
// names the mapping in messages ("key SetPoint", "types").
func (l *loader) mapping(n *yaml.Node, what string, allowed ...string) []pair {
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			l.errorf(n, "%s: want a mapping, got nothing", what)
		} else {
			l.errorf(n, "%s: want a mapping, got %s", what, describe(n))
		}
		return nil
	}
	var out []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.errorf(k, "%s: want a name as mapping key, got %s", what, describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			l.errorf(k, "%s: duplicate %q (first at %d:%d)", what, k.Value, first.Line, first.Column)
			continue
		}
		seen[k.Value] = k
		if allowed != nil && !contains(allowed, k.Value) {
			if hint := suggest.DidYouMean(k.Value, allowed); hint != "" {
				l.errorf(k, "%s: unknown field %q%s", what, k.Value, hint)
			} else {
				l.errorf(k, "%s: unknown field %q (want one of: %s)", what, k.Value, strings.Join(allowed, ", "))
			}
			continue
		}
		out = append(out, pair{key: k, val: v, name: k.Value})
	}
	return out
}

// str returns the value of a string scalar, reporting anything else.
func (l *loader) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		l.errorf(n, "%s: want a string, got %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

func (l *loader) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.errorf(n, "%s: want true or false, got %s", what, describe(n))
		return false, false
	}
	return n.Value == "true", true
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// describe names what a node holds, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return strconv.Quote(n.Value)
		case "!!int":
			return "number " + n.Value
		case "!!float":
			return "number " + n.Value
		case "!!bool":
			return n.Value
		}
		return n.Value
	}
	return "an unexpected node"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var topFields = []string{"version", "package", "doc", "encoding", "types", "groups", "keys", "locks", "roles"}

func (l *loader) top(root *yaml.Node) {
	s := l.s
	s.Encoding = EncodingMsgpack
	var typesN, groupsN, keysN, locksN, rolesN *yaml.Node
	haveVersion, havePackage := false, false
	for _, p := range l.mapping(root, "schema", topFields...) {
		switch p.name {
		case "version":
			haveVersion = true
			l.version(p.val)
		case "package":
			havePackage = true
			if v, ok := l.str(p.val, "package"); ok {
				if !isPackageName(v) {
					l.errorf(p.val, "package %q: want a Go package name (lower-case ASCII letters, digits, '_'; not a keyword)", v)
				}
				s.Package = v
			}
		case "doc":
			s.Doc, _ = l.str(p.val, "doc")
		case "encoding":
			if e, ok := l.encoding(p.val); ok {
				s.Encoding = e
			}
		case "types":
			typesN = p.val
		case "groups":
			groupsN = p.val
		case "keys":
			keysN = p.val
		case "locks":
			locksN = p.val
		case "roles":
			rolesN = p.val
		}
	}
	if root.Kind != yaml.MappingNode {
		return
	}
	if !haveVersion {
		l.errorf(root, "version is required (this ssgen reads version: 1)")
	}
	if !havePackage {
		l.errorf(root, "package is required (the Go package name of the generated code)")
	}

	// Types are declared before anything resolves them, so a type may be
	// used above its declaration.
	var typeBodies []pair
	if typesN != nil {
		typeBodies = l.declareTypes(typesN)
	}
	l.types = map[string]*TypeDef{}
	for _, t := range s.Types {
		if l.types[t.Name] == nil {
			l.types[t.Name] = t
		}
	}
	for _, p := range typeBodies {
		l.typeBody(l.typeDef(p.name), p.val)
	}
	l.checkEvolution()
	if locksN != nil {
		s.Locks = l.locks(nil, locksN)
	}
	if keysN != nil {
		s.Keys = l.keys(nil, keysN)
	}
	if groupsN != nil {
		for _, p := range l.mapping(groupsN, "groups") {
			if g := l.group(p); g != nil {
				s.Groups = append(s.Groups, g)
			}
		}
	}
	if rolesN != nil {
		s.Roles = l.roles(rolesN)
	}
	l.check()
}

func (l *loader) version(n *yaml.Node) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		l.errorf(n, "version: want 1, got %s", describe(n))
		return
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v != 1 {
		l.errorf(n, "version %s is not supported (this ssgen reads version: 1)", n.Value)
		return
	}
	l.s.Version = v
}

func (l *loader) encoding(n *yaml.Node) (Encoding, bool) {
	v, ok := l.str(n, "encoding")
	if !ok {
		return "", false
	}
	for _, e := range encodings {
		if string(e) == v {
			return e, true
		}
	}
	var names []string
	for _, e := range encodings {
		names = append(names, string(e))
	}
	l.errorf(n, "encoding %q: want msgpack, json, string or bytes%s", v, suggest.DidYouMean(v, names))
	return "", false
}

// note formats a position for "(first at ...)" style references.
func note(p Pos) string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }
