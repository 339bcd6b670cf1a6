package templates

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitStruct declares a value struct. Its fields keep the schema's order,
// which is the order both encoders write them in; their names, types and
// tags (the wire names) are the ones package schema gives them.
func emitStruct(f *jen.File, t *schema.TypeDef) {
	comment(f, t.Name+" is a value struct of the schema.", sentence(t.Doc))
	f.Type().Id(t.Name).StructFunc(func(g *jen.Group) {
		for i, fd := range t.Fields {
			var notes string
			if fd.Optional {
				notes = "Optional: left out of the stored value when empty."
			}
			notes = strings.TrimSpace(notes + " " + evolutionNote(fd))
			if i > 0 && (fd.Doc != "" || notes != "") {
				g.Line()
			}
			comment(g, sentence(fd.Doc), notes)
			g.Id(fd.GoName).Add(fieldType(fd)).Tag(fd.GoTags())
		}
	})
}
