package templates

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// evolves reports whether code generated from s reads earlier forms of
// its values or keys, and so needs SupportPackageIsVersion4.
func evolves(s *schema.Schema) bool {
	for _, t := range s.Types {
		if t.Evolves() || t.EnumRenames() {
			return true
		}
	}
	for _, k := range s.AllKeys() {
		if k.Moved() {
			return true
		}
	}
	return false
}

// emitEvolution declares the package's codec.Evolution: data only, read
// by runtime/codec (protobuf-go's split of descriptor and logic). The
// value is schemaval.Evolution's, the one ssgen get and the console apply.
func emitEvolution(f *jen.File, s *schema.Schema) {
	ev := schemaval.Evolution(s.Types)
	if ev == nil {
		return
	}
	comment(f, schema.EvolutionVarName+" tells the codecs of this package how values stored under earlier versions of the schema read: fields renamed from earlier names, and defaults for fields those values lack.")
	f.Var().Id(schema.EvolutionVarName).Op("=").Op("&").Qual(codecPkg, "Evolution").Values(jen.Dict{
		jen.Id("Structs"): jen.Map(jen.String()).Qual(codecPkg, "StructEvolution").ValuesFunc(func(g *jen.Group) {
			for _, t := range s.Types {
				se, ok := ev.Structs[t.Name]
				if !ok {
					continue
				}
				g.Line().Lit(t.Name).Op(":").Values(jen.Id("Fields").Op(":").Index().Qual(codecPkg, "FieldEvolution").ValuesFunc(func(g *jen.Group) {
					for _, fe := range se.Fields {
						g.Line().Values(fieldEvolution(fe)...)
					}
					g.Line()
				}))
			}
			g.Line()
		}),
	})
}

func fieldEvolution(fe codec.FieldEvolution) []jen.Code {
	out := []jen.Code{jen.Id("Name").Op(":").Lit(fe.Name)}
	if len(fe.RenamedFrom) > 0 {
		out = append(out, jen.Id("RenamedFrom").Op(":").Index().String().ValuesFunc(func(g *jen.Group) {
			for _, r := range fe.RenamedFrom {
				g.Lit(r)
			}
		}))
	}
	if fe.Default != "" {
		out = append(out, jen.Id("Default").Op(":").Lit(fe.Default))
	}
	if fe.Type != "" {
		out = append(out, jen.Id("Type").Op(":").Lit(fe.Type))
	}
	return out
}

// evolvedCodec wraps a key's MessagePack or JSON codec in codec.Evolved
// when its values hold an evolving struct.
func evolvedCodec(k *schema.Key, inner *jen.Statement) *jen.Statement {
	if k.Encoding != schema.EncodingMsgpack && k.Encoding != schema.EncodingJSON {
		return inner
	}
	shape := schemaval.Shape(k.Type, schemaval.EvolutionOf(k.Type))
	if shape == "" {
		return inner
	}
	return jen.Qual(codecPkg, "Evolved").Types(goType(k.Type)).Values(jen.Dict{
		jen.Id("Codec"):     inner,
		jen.Id("Evolution"): jen.Id(schema.EvolutionVarName),
		jen.Id("Type"):      jen.Lit(shape),
	})
}

// maxDefaultInDoc bounds a default quoted in a doc comment; a longer one
// is named, not shown.
const maxDefaultInDoc = 60

// evolutionNote documents how a field reads values stored before it had
// its current name or existed.
func evolutionNote(fd *schema.Field) string {
	var parts []string
	if len(fd.RenamedFrom) > 0 {
		names := make([]string, len(fd.RenamedFrom))
		for i, r := range fd.RenamedFrom {
			names[i] = fmt.Sprintf("%q", r.Name)
		}
		parts = append(parts, "Stored values that hold it under an earlier name ("+strings.Join(names, ", ")+") read it from there.")
	}
	if fd.Default != nil {
		if len(fd.Default.Text) <= maxDefaultInDoc {
			parts = append(parts, "Stored values without it read its default, "+strconv.Quote(fd.Default.Text)+".")
		} else {
			parts = append(parts, "Stored values without it read its default, given in the schema.")
		}
	}
	return strings.Join(parts, " ")
}

// enumRenames declares the map of an enum's earlier spellings.
func enumRenames(f *jen.File, t *schema.TypeDef) {
	comment(f, t.RenamedVarName()+" maps the earlier spellings of "+t.Name+"'s values (renamed_from) to the values: stored values holding one read as the value.")
	f.Var().Id(t.RenamedVarName()).Op("=").Map(jen.String()).Id(t.Name).ValuesFunc(func(g *jen.Group) {
		for _, v := range t.Values {
			for _, r := range v.RenamedFrom {
				g.Line().Lit(r.Name).Op(":").Id(v.GoName)
			}
		}
		g.Line()
	})
}
