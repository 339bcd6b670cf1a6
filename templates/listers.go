package templates

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// The names of what emitGroupLister declares for group g. The exported
// ones are the schema's (schema/gonames.go), which refuses schema names
// that would meet them.
func paramsType(g *schema.Group) string  { return g.ParamsTypeName() }
func listerName(g *schema.Group) string  { return g.ListerName() }
func watcherName(g *schema.Group) string { return g.WatcherName() }
func parserName(g *schema.Group) string  { return "parse" + g.Name }
func templateVar(g *schema.Group) string { return g.TemplateVarName() }

// paramField is the Go field of a parameter in its group's Params struct.
func paramField(p *schema.Param) string { return p.FieldName() }

// emitGroupLister declares, for a group with parameters, its Params
// struct, its runtime.Template, a parser from a listed key's parameter
// values to the handle, and the List<Group>s and Watch<Group>s methods of
// the Store, which hand both to the runtime's ListGroup and WatchGroup.
func emitGroupLister(f *jen.File, g *schema.Group) {
	if len(g.Params) == 0 {
		return
	}
	path := g.Path.String()
	pt := paramsType(g)
	comment(f, fmt.Sprintf("%s are the parameters of a %s, as a listing or a watch reads them back from a key under %q.", pt, g.Name, path))
	f.Type().Id(pt).StructFunc(func(sg *jen.Group) {
		for _, p := range g.Params {
			if p.Doc != "" {
				comment(sg, sentence(p.Doc))
			}
			sg.Id(paramField(p)).Add(goType(p.Type))
		}
	})

	members := []jen.Code{jen.Lit(path)}
	member := func(name string, p schema.Path) {
		members = append(members, jen.Qual(runtimePkg, "TemplateMember").Values(
			jen.Id("Name").Op(":").Lit(name), jen.Id("Path").Op(":").Lit(p.String())))
	}
	for _, k := range g.Keys {
		member(k.Name, k.Path)
	}
	for _, l := range g.Locks {
		member(l.Name, l.Path)
	}
	// A moved key's earlier path, so that listing and watching see the
	// instances whose values have not moved yet. A moved group's earlier
	// path is another prefix, which one listing cannot cover: its
	// instances are listed once written under the new path.
	for _, k := range g.Keys {
		if g.Moved() {
			continue
		}
		for _, p := range k.MovedFrom {
			members = append(members, jen.Qual(runtimePkg, "TemplateMember").Values(
				jen.Id("Name").Op(":").Lit(k.Name), jen.Id("Path").Op(":").Lit(p.String()), jen.Id("Earlier").Op(":").True()))
		}
	}
	comment(f, fmt.Sprintf("%s is the shape of the keys and locks of a %s.", templateVar(g), g.Name))
	f.Var().Id(templateVar(g)).Op("=").Qual(runtimePkg, "NewTemplate").CallFunc(func(cg *jen.Group) {
		for _, m := range members {
			cg.Line().Add(m)
		}
		cg.Line()
	})

	// The parser: parameter values in path order → Params and handle.
	var stmts []jen.Code
	var args []jen.Code
	i := 0
	for _, seg := range g.Path.Segments {
		p := seg.Param
		if p == nil {
			continue
		}
		v := jen.Id("v").Index(jen.Lit(i))
		i++
		field := jen.Id("p").Dot(paramField(p))
		var parse *jen.Statement
		switch k := p.Type.Kind; {
		case k == schema.KindString:
			stmts = append(stmts, field.Clone().Op("=").Add(v))
			continue
		case k == schema.KindEnum:
			parse = jen.Id(p.Type.Def.ParserName()).Call(v)
		case k.IsSigned():
			parse = jen.Qual(runtimePkg, "ParseIntParam").Types(goType(p.Type)).Call(jen.Lit(p.Name), v)
		default:
			parse = jen.Qual(runtimePkg, "ParseUintParam").Types(goType(p.Type)).Call(jen.Lit(p.Name), v)
		}
		stmts = append(stmts, jen.If(field.Clone().Op(",").Err().Op("=").Add(parse), jen.Err().Op("!=").Nil()).Block(jen.Return()))
	}
	for _, p := range g.Params {
		args = append(args, jen.Id("p").Dot(paramField(p)))
	}
	if canFail(g.Params) {
		stmts = append(stmts, jen.List(jen.Id("h"), jen.Err()).Op("=").Id(storeRecvName).Dot(g.Name).Call(args...))
	} else {
		stmts = append(stmts, jen.Id("h").Op("=").Id(storeRecvName).Dot(g.Name).Call(args...))
	}
	stmts = append(stmts, jen.Return())
	comment(f, fmt.Sprintf("%s reads the parameter values %s matched (in path order) into a %s's parameters and handle, refusing what the accessor would.", parserName(g), templateVar(g), g.Name))
	f.Func().Params(jen.Id(storeRecvName).Op("*").Id("Store")).Id(parserName(g)).
		Params(jen.Id("v").Index().String()).
		Params(jen.Id("p").Id(pt), jen.Id("h").Op("*").Id(g.Name), jen.Err().Error()).
		Block(stmts...)

	generic := []jen.Code{jen.Id(pt), jen.Op("*").Id(g.Name)}
	comment(f,
		fmt.Sprintf("%s lists every %s that has a key or lock under %q, each once however many it has; range over All, whose items hold the %s's Params and Handle. Keys under that path whose parameters the accessor would refuse, or that are none of the group's keys and locks, are skipped. opts.From resumes a listing at the Cursor of an earlier one.", listerName(g), g.Name, path, g.Name))
	f.Func().Params(jen.Id(storeRecvName).Op("*").Id("Store")).Id(listerName(g)).
		Params(jen.Id("opts").Qual(runtimePkg, "ListOptions")).
		Op("*").Qual(runtimePkg, "GroupListing").Types(generic...).
		Block(jen.Return(jen.Qual(runtimePkg, "ListGroup").Call(
			jen.Id(storeRecvName).Dot("c"), jen.Id(templateVar(g)), jen.Id("opts"), jen.Id(storeRecvName).Dot(parserName(g)))))

	comment(f,
		fmt.Sprintf("%s watches every key and lock of every %s (runtime.WatchPattern): first an EventResync per existing key, then each change, with the %s's parameters, handle and the member's name. Instances created by other clients are found at each rescan (opts.Rescan, default runtime.DefaultRescan), those this client writes at once.", watcherName(g), g.Name, g.Name))
	f.Func().Params(jen.Id(storeRecvName).Op("*").Id("Store")).Id(watcherName(g)).
		Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("opts").Qual(runtimePkg, "PatternWatchOptions")).
		Qual("iter", "Seq2").Types(jen.Qual(runtimePkg, "GroupEvent").Types(generic...), jen.Error()).
		Block(jen.Return(jen.Qual(runtimePkg, "WatchGroup").Call(
			jen.Id("ctx"), jen.Id(storeRecvName).Dot("c"), jen.Id(templateVar(g)), jen.Id("opts"), jen.Id(storeRecvName).Dot(parserName(g)))))
}
