package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// ownedParams is every parameter with the qualified name of its owner (a
// group, key or lock), in schema order.
type ownedParam struct {
	owner string
	p     *schema.Param
}

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

// emitParamCheck declares the compiled patterns and the helpers the
// accessors use to refuse a parameter value before any request: one that
// is empty, holds '/' (it would spill into the next path segment and
// could name another key), or misses its pattern.
func emitParamCheck(f *jen.File, s *schema.Schema) {
	var needString, needEnum bool
	var patterns []ownedParam
	for _, op := range allOwnedParams(s) {
		switch op.p.Type.Kind {
		case schema.KindString:
			needString = true
			if op.p.Regexp != nil {
				patterns = append(patterns, op)
			}
		case schema.KindEnum:
			needEnum = true
		}
	}

	if len(patterns) > 0 {
		f.Comment("Patterns of the parameters that declare one, anchored to the whole value.")
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, op := range patterns {
				g.Id(patternVar(op.owner, op.p)).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(op.p.Regexp.String()))
			}
		})
	}
	if needString {
		comment(f, "checkParam refuses a string parameter that cannot fill one path segment.")
		f.Func().Id("checkParam").Params(jen.Id("name"), jen.Id("value").String(), jen.Id("pattern").Op("*").Qual("regexp", "Regexp")).Error().Block(
			jen.Switch().Block(
				jen.Case(jen.Id("value").Op("==").Lit("")).Block(
					jen.Return(paramError(jen.Id("name"), jen.Id("value"), jen.Lit("empty"))),
				),
				jen.Case(jen.Qual("strings", "Contains").Call(jen.Id("value"), jen.Lit("/"))).Block(
					jen.Return(paramError(jen.Id("name"), jen.Id("value"), jen.Lit("contains '/'"))),
				),
				jen.Case(jen.Id("pattern").Op("!=").Nil().Op("&&").Op("!").Id("pattern").Dot("MatchString").Call(jen.Id("value"))).Block(
					jen.Return(paramError(jen.Id("name"), jen.Id("value"), jen.Lit("does not match ").Op("+").Id("pattern").Dot("String").Call())),
				),
			),
			jen.Return(jen.Nil()),
		)
	}
	if needEnum {
		comment(f, "checkEnumParam refuses an enum parameter outside its declared values.")
		f.Func().Id("checkEnumParam").Params(jen.Id("name"), jen.Id("value").String(), jen.Id("valid").Bool()).Error().Block(
			jen.If(jen.Op("!").Id("valid")).Block(
				jen.Return(paramError(jen.Id("name"), jen.Id("value"), jen.Lit("not a declared value"))),
			),
			jen.Return(jen.Nil()),
		)
	}
}
