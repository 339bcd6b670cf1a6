package templates

import (
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitStruct declares a value struct. Its fields keep the schema's order,
// which is the order both encoders write them in; their names, types and
// tags (the wire names) are the ones package schema gives them.
func emitStruct(f *jen.File, t *schema.TypeDef) {
	switch {
	case t.Of != nil:
		comment(f, t.Name+" is version "+strconv.Itoa(t.Version)+" of "+t.Of.Name+": stored values of that version decode into it and are converted to "+t.Of.Name+" by "+t.ConvertFuncName()+".", sentence(t.Doc))
	case t.Version > 0:
		comment(f, t.Name+" is a value struct of the schema, version "+strconv.Itoa(t.Version)+" of it: values are stored with their version (field \"$v\"), and values stored as an earlier version are read through that version's struct ("+previousNames(t)+").", sentence(t.Doc))
	default:
		comment(f, t.Name+" is a value struct of the schema.", sentence(t.Doc))
	}
	f.Type().Id(t.Name).StructFunc(func(g *jen.Group) {
		for i, fd := range t.Fields {
			var notes string
			if fd.Optional {
				notes = "Optional: left out of the stored value when empty."
			}
			notes = strings.TrimSpace(notes + " " + evolutionNote(fd))
			notes = strings.TrimSpace(notes + " " + transitionNote(fd))
			if i > 0 && (fd.Doc != "" || notes != "") {
				g.Line()
			}
			comment(g, sentence(fd.Doc), notes)
			g.Id(fd.GoName).Add(fieldType(fd)).Tag(fd.GoTags())
		}
	})
}

func previousNames(t *schema.TypeDef) string {
	names := make([]string, len(t.Previous))
	for i, pv := range t.Previous {
		names[i] = pv.Name
	}
	if len(names) == 0 {
		return "none declared"
	}
	return strings.Join(names, ", ")
}
