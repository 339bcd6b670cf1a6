package schema

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The declarations that let a schema change without losing stored data:
// renamed_from on a field or an enum value, default on a field, removed on
// a struct. docs/schema.md ("Evolving a schema") is the user's guide.

type pendingDefault struct {
	td       *TypeDef
	f        *Field
	key, val *yaml.Node
}

// wireNames reads one name or a list of names. Names must be wire names
// and differ from each other.
func (l *loader) wireNames(n *yaml.Node, what string, listOnly bool) []Name {
	var items []*yaml.Node
	switch {
	case n.Kind == yaml.SequenceNode:
		items = n.Content
		if len(items) == 0 {
			l.errorf(n, "%s: want at least one name", what)
		}
	case !listOnly && n.Kind == yaml.ScalarNode && !isNull(n):
		items = []*yaml.Node{n}
	default:
		want := "a name or a list of names"
		if listOnly {
			want = "a list of names"
		}
		l.errorf(n, "%s: want %s, got %s", what, want, describe(n))
		return nil
	}
	var out []Name
	seen := map[string]Pos{}
	for _, it := range items {
		v, ok := l.str(it, what)
		if !ok {
			continue
		}
		if !validWireName(v) {
			l.errorf(it, "%s: %q is not a wire name (an ASCII letter or '_', then letters, digits, '_' or '-')", what, v)
			continue
		}
		if first, dup := seen[v]; dup {
			l.errorf(it, "%s: duplicate %q (first at %s)", what, v, note(first))
			continue
		}
		seen[v] = l.pos(it)
		out = append(out, Name{Name: v, Pos: l.pos(it)})
	}
	return out
}

// enumSpellings reads one earlier spelling of an enum value, or a list.
func (l *loader) enumSpellings(n *yaml.Node, what string) []Name {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []Name
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || isNull(it) || it.Value == "" {
			l.errorf(it, "%s: want a non-empty value, got %s", what, describe(it))
			continue
		}
		out = append(out, Name{Name: it.Value, Pos: l.pos(it)})
	}
	return out
}

// checkEvolution checks the evolution declarations of every type: that an
// earlier name is nobody's current one and belongs to one field or value
// only, and that each default fits its field's type.
func (l *loader) checkEvolution() {
	for _, td := range l.s.Types {
		switch td.Kind {
		case KindStruct:
			l.checkFieldNames(td)
		case KindEnum:
			l.checkEnumSpellings(td)
		}
	}
	for _, d := range l.defaults {
		what := "field " + d.td.Name + "." + d.f.Name + ": default"
		switch {
		case d.f.Type == nil:
			continue // its type is reported
		case d.f.Optional:
			// An optional field left empty is not written, so it would
			// read back as the default instead of empty.
			l.errorf(d.key, "%s: an optional field cannot have a default (an empty value is left out of the stored value and would read back as the default); drop optional", what)
			continue
		case isNull(d.val):
			l.errorf(d.val, "%s: want a value, got nothing", what)
			continue
		}
		v, ok := l.defaultValue(d.val, d.f.Type, what, 0)
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil { // not reached: defaultValue builds JSON-able values
			l.errorf(d.val, "%s: %v", what, err)
			continue
		}
		text := string(b)
		if d.val.Kind == yaml.ScalarNode {
			text = d.val.Value
		}
		d.f.Default = &Default{JSON: string(b), Text: text, Pos: l.pos(d.val)}
	}
}

func (l *loader) checkFieldNames(td *TypeDef) {
	current := map[string]bool{}
	for _, f := range td.Fields {
		current[f.Name] = true
	}
	claimed := map[string]string{} // earlier or removed name -> who claims it
	claim := func(n Name, who string) bool {
		if first, ok := claimed[n.Name]; ok {
			l.errs.add(n.Pos, "type %s: %q is already claimed by %s; an earlier name belongs to one field", td.Name, n.Name, first)
			return false
		}
		claimed[n.Name] = who
		return true
	}
	for _, r := range td.Removed {
		if current[r.Name] {
			l.errs.add(r.Pos, "type %s: removed: %q is a field of the type; a removed name may not be used again while it is listed (stored values hold the old field's data under it)", td.Name, r.Name)
			continue
		}
		claim(r, "removed")
	}
	for _, f := range td.Fields {
		for _, r := range f.RenamedFrom {
			switch {
			case current[r.Name]:
				l.errs.add(r.Pos, "field %s.%s: renamed_from %q names a current field of the type", td.Name, f.Name, r.Name)
			default:
				claim(r, "field "+f.Name)
			}
		}
	}
}

func (l *loader) checkEnumSpellings(td *TypeDef) {
	current := map[string]bool{}
	for _, v := range td.Values {
		current[v.Value] = true
	}
	claimed := map[string]string{}
	for _, v := range td.Values {
		for _, r := range v.RenamedFrom {
			switch {
			case current[r.Name]:
				l.errs.add(r.Pos, "enum %s: renamed_from %q of value %q is a current value of the enum", td.Name, r.Name, v.Value)
			case claimed[r.Name] != "":
				l.errs.add(r.Pos, "enum %s: renamed_from %q of value %q is already claimed by value %q", td.Name, r.Name, v.Value, claimed[r.Name])
			default:
				claimed[r.Name] = v.Value
			}
		}
	}
}

// defaultValue checks a default against type t and returns it in the
// JSON form of the generated Go type.
func (l *loader) defaultValue(n *yaml.Node, t *Type, what string, depth int) (any, bool) {
	if depth > maxTypeDepth {
		l.errorf(n, "%s: nests deeper than %d levels", what, maxTypeDepth)
		return nil, false
	}
	fail := func(want string) (any, bool) {
		l.errorf(n, "%s: want %s for type %s, got %s", what, want, t, describe(n))
		return nil, false
	}
	scalar := n.Kind == yaml.ScalarNode && !isNull(n)
	switch {
	case t.Kind == KindBool:
		if !scalar || n.Tag != "!!bool" {
			return fail("true or false")
		}
		return n.Value == "true", true
	case t.Kind.IsInteger():
		if !scalar || n.Tag != "!!int" {
			return fail("an integer")
		}
		return l.intDefault(n, t, what)
	case t.Kind == KindFloat32 || t.Kind == KindFloat64:
		if !scalar || (n.Tag != "!!int" && n.Tag != "!!float") {
			return fail("a number")
		}
		bits := 64
		if t.Kind == KindFloat32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), bits)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			l.errorf(n, "%s: %s is not a finite %s", what, n.Value, t)
			return nil, false
		}
		return f, true
	case t.Kind == KindString:
		if !scalar || n.Tag != "!!str" {
			return fail("a string")
		}
		return n.Value, true
	case t.Kind == KindEnum:
		if !scalar {
			return fail("a value of the enum")
		}
		for _, v := range t.Def.Values {
			if v.Value == n.Value {
				return n.Value, true
			}
		}
		l.errorf(n, "%s: %q is not a declared value of enum %s", what, n.Value, t.Def.Name)
		return nil, false
	case t.Kind == KindBytes:
		if !scalar || n.Tag != "!!str" {
			return fail("a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(n.Value)
		if err != nil {
			l.errorf(n, "%s: %q is not standard base64", what, n.Value)
			return nil, false
		}
		return b, true
	case t.Kind == KindTime:
		if !scalar {
			return fail("an RFC 3339 time")
		}
		tm, err := time.Parse(time.RFC3339Nano, n.Value)
		if err != nil {
			l.errorf(n, "%s: %q is not an RFC 3339 time (like 2026-01-02T15:04:05Z)", what, n.Value)
			return nil, false
		}
		return tm, true
	case t.Kind == KindDuration:
		if !scalar || n.Tag != "!!str" {
			return fail("a duration like \"30s\"")
		}
		d, err := time.ParseDuration(n.Value)
		if err != nil {
			l.errorf(n, "%s: %q is not a duration (like 30s or 1m30s)", what, n.Value)
			return nil, false
		}
		return int64(d), true
	case t.Kind == KindList:
		if n.Kind != yaml.SequenceNode {
			return fail("a list")
		}
		out := make([]any, 0, len(n.Content))
		ok := true
		for _, it := range n.Content {
			v, good := l.defaultValue(it, t.Elem, what, depth+1)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	case t.Kind == KindMap:
		if n.Kind != yaml.MappingNode {
			return fail("a mapping")
		}
		out := map[string]any{}
		ok := true
		for _, p := range l.mapping(n, what) {
			v, good := l.defaultValue(p.val, t.Elem, what, depth+1)
			ok = ok && good
			out[p.name] = v
		}
		return out, ok
	case t.Kind == KindStruct:
		if n.Kind != yaml.MappingNode {
			return fail("a mapping of fields")
		}
		out := map[string]any{}
		ok := true
		names := make([]string, len(t.Def.Fields))
		for i, f := range t.Def.Fields {
			names[i] = f.Name
		}
		for _, p := range l.mapping(n, what+" ("+t.Def.Name+")", names...) {
			f := findField(t.Def, func(f *Field) bool { return f.Name == p.name })
			if f == nil || f.Type == nil {
				ok = false
				continue
			}
			v, good := l.defaultValue(p.val, f.Type, what+"."+p.name, depth+1)
			ok = ok && good
			out[p.name] = v
		}
		// A default is taken as written: the struct's own field defaults
		// do not fill it (they apply to stored values only), so a required
		// field left out would read as its zero value, which the value's
		// writer could never have stored.
		for _, f := range t.Def.Fields {
			if _, given := out[f.Name]; given || f.Optional || f.Type == nil {
				continue
			}
			switch f.Type.Kind {
			case KindList, KindMap, KindBytes: // left out, written empty
				continue
			}
			l.errorf(n, "%s: the %s value leaves out required field %s; give it (%s's own field defaults do not fill a default)", what, t.Def.Name, f.Name, t.Def.Name)
			ok = false
		}
		return out, ok
	case t.Kind == KindGoType:
		l.errorf(n, "%s: a go_type (%s) cannot have a default: ssgen cannot check its value", what, t.Def.Name)
		return nil, false
	}
	return nil, false
}

func (l *loader) intDefault(n *yaml.Node, t *Type, what string) (any, bool) {
	bits := 64
	switch t.Kind {
	case KindInt8, KindUint8:
		bits = 8
	case KindInt16, KindUint16:
		bits = 16
	case KindInt32, KindUint32:
		bits = 32
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if t.Kind.IsSigned() {
		v, err := strconv.ParseInt(s, 0, bits)
		if err != nil {
			l.errorf(n, "%s: %s does not fit in %s", what, n.Value, t)
			return nil, false
		}
		return v, true
	}
	v, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		l.errorf(n, "%s: %s does not fit in %s", what, n.Value, t)
		return nil, false
	}
	return v, true
}
