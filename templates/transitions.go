package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// Transition rules (immutable, monotonic) become one small function per
// struct type that has any, directly or through its struct fields:
// ssgenTransitionsT(path, old, new *T) calls a runtime helper per field with a
// rule and the function of each struct field that has rules. A key of
// such a type gets runtime.Transitions with it, which CompareAndSet,
// SetIfVersion and Update run on the value they read. Rules inside list
// and map elements are not checked (an element has no identity to hold
// a rule to).

// hasTransitionRules reports whether any type of s has transition rules:
// its code then needs SupportPackageIsVersion6.
func hasTransitionRules(s *schema.Schema) bool {
	for _, t := range s.Types {
		if t.HasTransitionRules() {
			return true
		}
	}
	return false
}

// transitionsFunc is the name of T's check function.
func transitionsFunc(t *schema.TypeDef) string { return t.TransitionsFuncName() }

// emitTransitions declares t's check function, when t has rules.
func emitTransitions(f *jen.File, t *schema.TypeDef) {
	if t.Kind != schema.KindStruct || t.Of != nil || !t.HasTransitionRules() {
		return
	}
	comment(f, transitionsFunc(t)+" checks a write of n over o against the transition rules of "+t.Name+" and the structs in it (nil o or n: the value is absent); p is the field path so far.")
	f.Func().Id(transitionsFunc(t)).Params(jen.Id("p").String(), jen.List(jen.Id("o"), jen.Id("n")).Op("*").Id(t.Name)).Error().BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("o").Op("==").Nil()).Block(jen.Return(jen.Nil()))
		g.Id("absent").Op(":=").Id("n").Op("==").Nil()
		g.If(jen.Id("absent")).Block(jen.Id("n").Op("=").New(jen.Id(t.Name)))
		for _, fd := range t.Fields {
			call := fieldTransition(fd)
			if call == nil {
				continue
			}
			g.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		}
		g.Return(jen.Nil())
	})
}

// fieldTransition is the check of one field, nil when it has none.
func fieldTransition(fd *schema.Field) *jen.Statement {
	path := jen.Id("p").Op("+").Lit("." + fd.Name)
	// old and new: pointers to the field's value, nil when absent.
	var old, nw jen.Code
	switch {
	case fd.GoPointer():
		old, nw = jen.Id("o").Dot(fd.GoName), jen.Id("n").Dot(fd.GoName)
	case fd.Optional && fd.Type.Kind == schema.KindBytes:
		old = jen.Qual(runtimePkg, "NonEmpty").Call(jen.Op("&").Id("o").Dot(fd.GoName))
		nw = jen.Qual(runtimePkg, "NonEmpty").Call(jen.Op("&").Id("n").Dot(fd.GoName))
	case fd.Optional:
		old = jen.Qual(runtimePkg, "NonZero").Call(jen.Op("&").Id("o").Dot(fd.GoName))
		nw = jen.Qual(runtimePkg, "NonZero").Call(jen.Op("&").Id("n").Dot(fd.GoName))
	default:
		old = jen.Op("&").Id("o").Dot(fd.GoName)
		nw = jen.Qual(runtimePkg, "Present").Call(jen.Id("absent"), jen.Op("&").Id("n").Dot(fd.GoName))
	}
	elem := goType(fd.Type)
	switch {
	case fd.Immutable:
		var eq jen.Code
		switch fd.Type.Kind {
		case schema.KindBytes:
			eq = jen.Qual(runtimePkg, "SameBytes")
		case schema.KindTime:
			eq = jen.Qual(runtimePkg, "SameTime")
		default:
			eq = jen.Qual(runtimePkg, "Same").Types(elem)
		}
		return jen.Qual(runtimePkg, "CheckImmutable").Call(path, old, nw, eq)
	case fd.Monotonic != "":
		order := jen.Qual(runtimePkg, "Order").Types(elem)
		if fd.Type.Kind == schema.KindTime {
			order = jen.Qual(runtimePkg, "OrderTime")
		}
		return jen.Qual(runtimePkg, "CheckMonotonic").Call(path, jen.Lit(fd.Monotonic == schema.MonotonicIncreasing), old, nw, order)
	case fd.Type.Kind == schema.KindStruct && fd.Type.Def.HasTransitionRules():
		return jen.Id(transitionsFunc(fd.Type.Def)).Call(path, old, nw)
	}
	return nil
}

// transitionsOption is the runtime.Transitions option of a key whose type
// has rules, nil otherwise.
func transitionsOption(k *schema.Key) jen.Code {
	if k.Type.Kind != schema.KindStruct || !k.Type.Def.HasTransitionRules() {
		return nil
	}
	t := k.Type.Def
	return jen.Qual(runtimePkg, "Transitions").Types(jen.Id(t.Name)).Call(
		jen.Func().Params(jen.List(jen.Id("o"), jen.Id("n")).Op("*").Id(t.Name)).Error().Block(
			jen.Return(jen.Id(transitionsFunc(t)).Call(jen.Lit(t.Name), jen.Id("o"), jen.Id("n"))),
		))
}

// transitionNote documents a field's rule on the generated struct field.
func transitionNote(fd *schema.Field) string {
	switch {
	case fd.Immutable:
		return "Immutable: once set, CompareAndSet, SetIfVersion and Update refuse to change or drop it (runtime.ErrTransition); Set does not check."
	case fd.Monotonic == schema.MonotonicIncreasing:
		return "Monotonic: CompareAndSet, SetIfVersion and Update refuse a value not greater than the one stored (runtime.ErrTransition); Set does not check."
	case fd.Monotonic == schema.MonotonicNonDecreasing:
		return "Monotonic: CompareAndSet, SetIfVersion and Update refuse a value less than the one stored (runtime.ErrTransition); Set does not check."
	}
	return ""
}
