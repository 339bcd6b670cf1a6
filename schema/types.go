package schema

import (
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/suggest"
)

// declareTypes registers every declared type by name and kind, so bodies
// can refer to types declared later. It returns the bodies to decode.
func (l *loader) declareTypes(n *yaml.Node) []pair {
	var bodies []pair
	for _, p := range l.mapping(n, "types") {
		if !isExported(p.name) {
			l.errorf(p.key, "type %q: name must be %s", p.name, exportedRule)
		}
		td := &TypeDef{Name: p.name, Pos: l.pos(p.key), Kind: l.typeKind(p)}
		l.s.Types = append(l.s.Types, td)
		bodies = append(bodies, p)
	}
	return bodies
}

var typeDefFields = []string{"doc", "fields", "enum", "go_type", "removed", "version", "previous", "write_version"}

// typeKind looks ahead at a type body for its kind, so references to the
// type can be classified before bodies are decoded. Problems are reported
// by typeBody.
func (l *loader) typeKind(p pair) Kind {
	if p.val.Kind != yaml.MappingNode {
		return KindInvalid
	}
	kind := KindInvalid
	for i := 0; i+1 < len(p.val.Content); i += 2 {
		var k Kind
		switch p.val.Content[i].Value {
		case "fields":
			k = KindStruct
		case "enum":
			k = KindEnum
		case "go_type":
			k = KindGoType
		default:
			continue
		}
		if kind != KindInvalid {
			return KindInvalid
		}
		kind = k
	}
	return kind
}

func (l *loader) typeBody(td *TypeDef, n *yaml.Node) {
	what := "type " + td.Name
	var kinds []*yaml.Node
	var removedN pair
	var vers []pair
	for _, p := range l.mapping(n, what, typeDefFields...) {
		switch p.name {
		case "doc":
			td.Doc, _ = l.str(p.val, what+": doc")
		case "fields":
			kinds = append(kinds, p.key)
			td.Fields = l.fields(td, p.val)
		case "enum":
			kinds = append(kinds, p.key)
			td.Values = l.enumValues(td, p.val)
		case "go_type":
			kinds = append(kinds, p.key)
			td.GoType = l.goType(td, p.val)
		case "removed":
			removedN = p
		case "version", "previous", "write_version":
			vers = append(vers, p)
		}
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	l.typeVersions(td, vers)
	if removedN.key != nil {
		if td.Kind != KindStruct {
			l.errorf(removedN.key, "%s: removed lists fields dropped from a struct, and %s is not a struct", what, td.Name)
		} else {
			td.Removed = l.wireNames(removedN.val, what+": removed", true)
		}
	}
	switch len(kinds) {
	case 0:
		l.errorf(n, "%s: want one of fields, enum or go_type", what)
	case 1:
	default:
		l.errorf(kinds[1], "%s: %s cannot be combined with %s; a type is one of fields, enum or go_type", what, kinds[1].Value, kinds[0].Value)
	}
}

var fieldLongForm = []string{"type", "optional", "doc", "go_name", "renamed_from", "default", "immutable", "monotonic"}

func (l *loader) fields(td *TypeDef, n *yaml.Node) []*Field {
	var out []*Field
	for _, p := range l.mapping(n, "type "+td.Name+": fields") {
		what := "field " + td.Name + "." + p.name
		f := &Field{Name: p.name, Pos: l.pos(p.key)}
		var immN, monoN *yaml.Node // where immutable and monotonic are written
		if p.name == VersionField {
			l.errorf(p.key, "%s: %q is reserved for the version stamp of versioned types", what, p.name)
		} else if !validWireName(p.name) {
			l.errorf(p.key, "%s: wire name must start with an ASCII letter or '_' and hold only letters, digits, '_' or '-'", what)
		}
		if isLongField(p.val) {
			for _, q := range l.mapping(p.val, what, fieldLongForm...) {
				switch q.name {
				case "type":
					f.Type = l.typeExpr(q.val, what)
				case "optional":
					f.Optional, _ = l.boolean(q.val, what+": optional")
				case "doc":
					f.Doc, _ = l.str(q.val, what+": doc")
				case "go_name":
					if v, ok := l.str(q.val, what+": go_name"); ok {
						if !isExported(v) {
							l.errorf(q.val, "%s: go_name %q must be %s", what, v, exportedRule)
						}
						f.GoName = v
					}
				case "renamed_from":
					f.RenamedFrom = l.wireNames(q.val, what+": renamed_from", false)
				case "default":
					// Checked once every type is declared: the field's
					// type may be declared further down.
					l.defaults = append(l.defaults, pendingDefault{td, f, q.key, q.val})
				case "immutable":
					f.Immutable, _ = l.boolean(q.val, what+": immutable")
					immN = q.key
				case "monotonic":
					if v, ok := l.str(q.val, what+": monotonic"); ok {
						if contains(monotonics, v) {
							f.Monotonic = Monotonic(v)
							monoN = q.key
						} else {
							l.errorf(q.val, "%s: monotonic %q: want increasing or non_decreasing%s", what, v, suggest.DidYouMean(v, monotonics))
						}
					}
				}
			}
			if f.Type == nil && p.val.Kind == yaml.MappingNode {
				l.errorf(p.val, "%s: type is required", what)
			}
			l.transitionRules(f, what, immN, monoN)
		} else {
			f.Type = l.typeExpr(p.val, what)
		}
		if f.GoName == "" && validWireName(p.name) {
			f.GoName = exportedName(p.name)
			if !isExported(f.GoName) {
				l.errorf(p.key, "%s: %q does not render to an exported Go name; give it a go_name", what, p.name)
			}
		}
		out = append(out, f)
	}
	return out
}

// isLongField tells the {type: T, optional: ...} form of a field from a
// type written as a {list: T} or {map: T} mapping.
func isLongField(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i < len(n.Content); i += 2 {
		if v := n.Content[i].Value; v == "list" || v == "map" {
			return false
		}
	}
	return true
}

func validWireName(s string) bool {
	if s == "" || !(s[0] == '_' || isASCIILetter(s[0])) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var enumLongForm = []string{"value", "go_name", "doc", "renamed_from"}

func (l *loader) enumValues(td *TypeDef, n *yaml.Node) []*EnumValue {
	what := "enum " + td.Name
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "%s: want a list of values, got %s", what, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.errorf(n, "%s: want at least one value", what)
	}
	var out []*EnumValue
	seen := map[string]*EnumValue{}
	for _, item := range n.Content {
		ev := &EnumValue{Pos: l.pos(item)}
		before := len(l.errs)
		switch {
		case item.Kind == yaml.ScalarNode && !isNull(item):
			ev.Value = item.Value
		case item.Kind == yaml.MappingNode:
			for _, q := range l.mapping(item, what+" value", enumLongForm...) {
				switch q.name {
				case "value":
					if q.val.Kind == yaml.ScalarNode && !isNull(q.val) {
						ev.Value = q.val.Value
					} else {
						l.errorf(q.val, "%s: value: want a string, got %s", what, describe(q.val))
					}
				case "go_name":
					if v, ok := l.str(q.val, what+": go_name"); ok {
						if !isExported(v) {
							l.errorf(q.val, "%s: go_name %q must be %s", what, v, exportedRule)
						}
						ev.GoName = v
					}
				case "doc":
					ev.Doc, _ = l.str(q.val, what+": doc")
				case "renamed_from":
					ev.RenamedFrom = l.enumSpellings(q.val, what+" value: renamed_from")
				}
			}
			if ev.Value == "" && !hasKey(item, "value") {
				l.errorf(item, "%s: value is required", what)
				continue
			}
		default:
			l.errorf(item, "%s: want a value or {value, go_name, doc, renamed_from}, got %s", what, describe(item))
			continue
		}
		if ev.Value == "" {
			if len(l.errs) == before {
				l.errorf(item, "%s: a value must not be empty", what)
			}
			continue
		}
		if first, dup := seen[ev.Value]; dup {
			l.errorf(item, "%s: duplicate value %q (first at %s)", what, ev.Value, note(first.Pos))
			continue
		}
		seen[ev.Value] = ev
		if ev.GoName == "" {
			suffix := exportedName(ev.Value)
			if suffix == "" {
				l.errorf(item, "%s: value %q does not render to a Go constant name; give it a go_name", what, ev.Value)
				continue
			}
			ev.GoName = td.Name + suffix
		}
		out = append(out, ev)
	}
	return out
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (l *loader) goType(td *TypeDef, n *yaml.Node) *GoTypeRef {
	what := "type " + td.Name + ": go_type"
	v, ok := l.str(n, what)
	if !ok {
		return nil
	}
	slash := strings.LastIndexByte(v, '/')
	dot := strings.LastIndexByte(v, '.')
	if dot <= slash || dot == len(v)-1 {
		l.errorf(n, "%s %q: want an import path and a type name, like \"example.com/units.Celsius\"", what, v)
		return nil
	}
	g := &GoTypeRef{ImportPath: v[:dot], Name: v[dot+1:]}
	if !isExported(g.Name) {
		l.errorf(n, "%s %q: type name %q must be %s", what, v, g.Name, exportedRule)
	}
	if !validImportPath(g.ImportPath) {
		l.errorf(n, "%s %q: %q is not a valid import path", what, v, g.ImportPath)
	}
	return g
}

func validImportPath(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' || strings.Contains(p, "//") {
		return false
	}
	for _, r := range p {
		if r <= ' ' || r > '~' || strings.ContainsRune("\"'`\\:;,!$&()*<>?[]^{|}", r) {
			return false
		}
	}
	return true
}

// typeExpr decodes a value type: a string expression ("float64",
// "[]SetPoint", "map[string]int") or a {list: T} / {map: T} mapping.
func (l *loader) typeExpr(n *yaml.Node, what string) *Type {
	return l.typeExprDepth(n, what, 0)
}

func (l *loader) typeExprDepth(n *yaml.Node, what string, depth int) *Type {
	if depth > maxTypeDepth {
		l.errorf(n, "%s: type nests lists and maps more than %d deep", what, maxTypeDepth)
		return nil
	}
	if n.Kind == yaml.MappingNode {
		ps := l.mapping(n, what+": type", "list", "map")
		if len(ps) != 1 {
			if len(ps) > 1 {
				l.errorf(ps[1].key, "%s: a type is either list or map, not both", what)
			}
			return nil
		}
		elem := l.typeExprDepth(ps[0].val, what, depth+1)
		if elem == nil {
			return nil
		}
		t := &Type{Kind: KindList, Elem: elem, Pos: l.pos(n)}
		if ps[0].name == "map" {
			t.Kind = KindMap
		}
		return t
	}
	v, ok := l.str(n, what+": type")
	if !ok {
		return nil
	}
	return l.parseTypeString(n, what, strings.TrimSpace(v), 0)
}

// maxTypeDepth bounds how deep lists and maps nest, so that a hostile
// schema cannot make the loader or a generator recurse without end.
const maxTypeDepth = 32

func (l *loader) parseTypeString(n *yaml.Node, what, v string, depth int) *Type {
	p := l.pos(n)
	if depth > maxTypeDepth {
		l.errorf(n, "%s: type nests lists and maps more than %d deep", what, maxTypeDepth)
		return nil
	}
	switch {
	case strings.HasPrefix(v, "[]"):
		elem := l.parseTypeString(n, what, v[2:], depth+1)
		if elem == nil {
			return nil
		}
		return &Type{Kind: KindList, Elem: elem, Pos: p}
	case strings.HasPrefix(v, "map["):
		if !strings.HasPrefix(v, "map[string]") {
			l.errorf(n, "%s: map keys must be string (map[string]T)", what)
			return nil
		}
		elem := l.parseTypeString(n, what, v[len("map[string]"):], depth+1)
		if elem == nil {
			return nil
		}
		return &Type{Kind: KindMap, Elem: elem, Pos: p}
	case v == "":
		l.errorf(n, "%s: type is empty", what)
		return nil
	}
	if k, ok := scalarKinds[v]; ok {
		return &Type{Kind: k, Pos: p}
	}
	if td := l.typeDef(v); td != nil {
		if td.Kind == KindInvalid {
			return nil // its declaration is reported
		}
		return &Type{Kind: td.Kind, Def: td, Pos: p}
	}
	l.errorf(n, "%s: unknown type %q%s", what, v, suggest.DidYouMean(v, l.typeNames(nil)))
	return nil
}

// typeNames is every value type name a schema may write (the scalars and
// the declared types), or only those keep accepts: for suggestions.
func (l *loader) typeNames(keep func(Kind) bool) []string {
	var out []string
	for name, k := range scalarKinds {
		if keep == nil || keep(k) {
			out = append(out, name)
		}
	}
	sort.Strings(out) // map order must not pick between equally close names
	for _, t := range l.s.Types {
		if keep == nil || keep(t.Kind) {
			out = append(out, t.Name)
		}
	}
	return out
}

// transitionRules checks a field's immutable and monotonic against its
// type: immN and monoN are where they are written (nil when not).
func (l *loader) transitionRules(f *Field, what string, immN, monoN *yaml.Node) {
	if f.Type == nil {
		return
	}
	if f.Immutable && !ImmutableKind(f.Type.Kind) {
		l.errorf(immN, "%s: immutable applies to scalar, enum, bytes, time and duration fields, not %s (a %s)", what, f.Type, f.Type.Kind)
		f.Immutable = false
	}
	if f.Monotonic != "" && !MonotonicKind(f.Type.Kind) {
		l.errorf(monoN, "%s: monotonic applies to number, time and duration fields, not %s", what, f.Type)
		f.Monotonic = ""
	}
	if f.Immutable && f.Monotonic != "" {
		l.errorf(monoN, "%s: immutable and monotonic contradict each other (an immutable field never moves); keep one", what)
		f.Monotonic = ""
	}
}
