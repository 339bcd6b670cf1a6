package schemaval

import (
	"slices"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// Evolution returns the codec.Evolution of the given types: an entry for
// every struct among them that evolves (a field renamed_from an earlier
// name, or with a default) or holds, at any depth, one that does; nil
// when none does. Generated code declares this value (templates render
// it) and schemaval's codecs apply it, so both read earlier forms of a
// value by the same rules.
func Evolution(types []*schema.TypeDef) *codec.Evolution {
	evolving := map[*schema.TypeDef]bool{}
	for _, t := range types {
		if t.Kind == schema.KindStruct && t.Evolves() {
			evolving[t] = true
		}
	}
	if len(evolving) == 0 {
		return nil
	}
	// A struct holding an evolving one evolves too: its decoder must walk
	// into the field. Repeat until nothing is added (recursive types).
	for changed := true; changed; {
		changed = false
		for _, t := range types {
			if t.Kind != schema.KindStruct || evolving[t] {
				continue
			}
			for _, f := range t.Fields {
				if f.Type != nil && shape(f.Type, evolving) != "" {
					evolving[t] = true
					changed = true
					break
				}
			}
		}
	}
	ev := &codec.Evolution{Structs: map[string]codec.StructEvolution{}}
	for _, t := range types {
		if !evolving[t] {
			continue
		}
		var se codec.StructEvolution
		for _, f := range t.Fields {
			fe := codec.FieldEvolution{Name: f.Name}
			for _, r := range f.RenamedFrom {
				fe.RenamedFrom = append(fe.RenamedFrom, r.Name)
			}
			if f.Default != nil {
				fe.Default = f.Default.JSON
			}
			if f.Type != nil {
				fe.Type = shape(f.Type, evolving)
			}
			if len(fe.RenamedFrom) > 0 || fe.Default != "" || fe.Type != "" {
				se.Fields = append(se.Fields, fe)
			}
		}
		ev.Structs[t.Name] = se
	}
	return ev
}

// Shape returns t's shape in the terms of ev ("SetPoint", "[]SetPoint",
// "map[string]SetPoint"), or "" when t holds no struct of ev: the Type of
// a codec.Evolved, and when it is "", the type needs none.
func Shape(t *schema.Type, ev *codec.Evolution) string {
	if ev == nil {
		return ""
	}
	return shapeOf(t, func(d *schema.TypeDef) bool { _, ok := ev.Structs[d.Name]; return ok })
}

// shape is Shape over the struct types a schema's evolution covers, before
// its codec.Evolution is built.
func shape(t *schema.Type, evolving map[*schema.TypeDef]bool) string {
	return shapeOf(t, func(d *schema.TypeDef) bool { return evolving[d] })
}

// shapeOf writes t in Go syntax down to the first struct evolves says
// yes to, or "" when t holds none.
func shapeOf(t *schema.Type, evolves func(*schema.TypeDef) bool) string {
	switch t.Kind {
	case schema.KindList, schema.KindMap:
		inner := shapeOf(t.Elem, evolves)
		if inner == "" {
			return ""
		}
		if t.Kind == schema.KindList {
			return "[]" + inner
		}
		return "map[string]" + inner
	case schema.KindStruct:
		if evolves(t.Def) {
			return t.Def.Name
		}
	}
	return ""
}

// reachable returns the struct types a value of t can hold, t's own
// first, each once.
func reachable(t *schema.Type) []*schema.TypeDef {
	var out []*schema.TypeDef
	var walk func(t *schema.Type)
	walk = func(t *schema.Type) {
		switch {
		case t == nil:
		case t.Kind == schema.KindList || t.Kind == schema.KindMap:
			walk(t.Elem)
		case t.Kind == schema.KindStruct && !slices.Contains(out, t.Def):
			out = append(out, t.Def)
			for _, f := range t.Def.Fields {
				walk(f.Type)
			}
		}
	}
	walk(t)
	return out
}

// EvolutionOf is Evolution of the structs a value of t can hold.
func EvolutionOf(t *schema.Type) *codec.Evolution { return Evolution(reachable(t)) }
