package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// ownedParam is a parameter with the qualified name of its owner (a group,
// key or lock).
type ownedParam struct {
	owner string
	p     *schema.Param
}

// allOwnedParams lists every parameter of s with its owner, in schema
// order.
func allOwnedParams(s *schema.Schema) []ownedParam {
	var out []ownedParam
	add := func(owner string, ps []*schema.Param) {
		for _, p := range ps {
			out = append(out, ownedParam{owner, p})
		}
	}
	for _, k := range s.Keys {
		add(k.QualifiedName(), k.Params)
	}
	for _, l := range s.Locks {
		add(l.QualifiedName(), l.Params)
	}
	for _, g := range s.Groups {
		add(g.Name, g.Params)
		for _, k := range g.Keys {
			add(k.QualifiedName(), k.Params)
		}
		for _, l := range g.Locks {
			add(l.QualifiedName(), l.Params)
		}
	}
	return out
}

// emitParamCheck declares the compiled patterns the accessors pass to
// runtime.CheckParam, which refuses a parameter value before any request:
// one that is empty, holds '/', or misses its pattern.
func emitParamCheck(f *jen.File, s *schema.Schema) {
	var patterns []ownedParam
	for _, op := range allOwnedParams(s) {
		if op.p.Type.Kind == schema.KindString && op.p.Regexp != nil {
			patterns = append(patterns, op)
		}
	}
	if len(patterns) > 0 {
		comment(f, "Patterns of the parameters that declare one, anchored to the whole value.")
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, op := range patterns {
				g.Id(patternVar(op.owner, op.p)).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(op.p.Regexp.String()))
			}
		})
	}
}
