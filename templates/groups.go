package templates

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitGroup declares a group's handle type and its accessor on the Store.
// An accessor whose parameters can be refused returns an error with the
// handle, the Go way; one whose parameters are all integers cannot fail
// and returns the handle alone, so it chains.
func emitGroup(f *jen.File, g *schema.Group, shadow map[string]bool) {
	path := g.Path.String()
	comment(f, fmt.Sprintf("%s is the handle of the keys and locks under %q.", g.Name, path), sentence(g.Doc))
	f.Type().Id(g.Name).StructFunc(func(sg *jen.Group) {
		sg.Id("s").Op("*").Id("Store")
		sg.Id("prefix").String()
		for i := range g.MovedFrom {
			sg.Id(earlierField(i)).String() // the prefix at one of the group's earlier paths (renamed_from)
		}
	})

	var note, moved string
	if canFail(g.Params) {
		note = paramNote(g.Params)
	}
	if g.Moved() {
		var from []string
		for _, p := range g.MovedFrom {
			from = append(from, strconv.Quote(p.String()))
		}
		moved = fmt.Sprintf("The group moved from %s (renamed_from): each key reads its earlier key there while it is absent, and every write deletes it. Listing and watching the group see the new path only.", strings.Join(from, ", "))
	}
	comment(f, fmt.Sprintf("%s returns the handle of the keys and locks under %q.", g.Name, path), moved, note)
	r := storeRecv(shadow)
	fields := jen.Dict{
		jen.Id("s"):      jen.Id(r.name),
		jen.Id("prefix"): pathExpr(r, nil, g.Path),
	}
	for i, p := range g.MovedFrom {
		fields[jen.Id(earlierField(i))] = pathExpr(r, nil, p)
	}
	handle := jen.Op("&").Id(g.Name).Values(fields)
	f.Func().Params(jen.Id(r.name).Op("*").Id("Store")).Id(g.Name).Params(paramList(r, g.Params)...).
		Add(returns(jen.Op("*").Id(g.Name), canFail(g.Params))).
		Block(body(r, g.Name, g.Params, handle)...)
}

// earlierField names the field of a group handle holding the prefix at
// the group's i-th earlier path: earlier, earlier2, earlier3, ...
func earlierField(i int) string {
	if i == 0 {
		return "earlier"
	}
	return "earlier" + strconv.Itoa(i+1)
}

// paramNote documents the checks of ps.
func paramNote(ps []*schema.Param) string {
	var strs, enums, patterns bool
	for _, p := range ps {
		switch p.Type.Kind {
		case schema.KindString:
			strs = true
			patterns = patterns || p.Pattern != ""
		case schema.KindEnum:
			enums = true
		}
	}
	var what []string
	if strs {
		what = append(what, "is empty", "contains '/'")
	}
	if patterns {
		what = append(what, "misses its pattern")
	}
	if enums {
		what = append(what, "is not a declared enum value")
	}
	s := "It returns a *runtime.ParamError naming the parameter, and sends nothing, when a parameter "
	switch len(what) {
	case 1:
		s += what[0] + "."
	default:
		s += strings.Join(what[:len(what)-1], ", ") + " or " + what[len(what)-1] + "."
	}
	for _, p := range ps {
		if p.Pattern != "" {
			s += fmt.Sprintf(" Parameter %s must match %q.", p.Name, p.Pattern)
		}
	}
	return s
}
