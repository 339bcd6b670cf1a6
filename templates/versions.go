package templates

import (
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// versioned reports whether s declares a versioned type, whose code needs
// SupportPackageIsVersion5.
func versioned(s *schema.Schema) bool {
	for _, t := range s.Types {
		if t.Version > 0 {
			return true
		}
	}
	return false
}

// emitVersions declares, for a versioned struct t, its previous versions'
// structs, the generated copies of their shared fields, and typed
// references to the conversions the user writes: a missing or mistyped
// one fails the build at a line whose comment says what to write.
func emitVersions(f *jen.File, t *schema.TypeDef) {
	for _, pv := range t.Previous {
		emitStruct(f, pv)
		shared := pv.SharedFields()
		comment(f, pv.CopyFuncName()+" returns the "+t.Name+" holding the fields version "+strconv.Itoa(pv.Version)+" shares with it (same name and type)"+fieldList(shared, 0)+"; "+pv.ConvertFuncName()+" sets the rest.")
		f.Func().Id(pv.CopyFuncName()).Params(jen.Id("from").Id(pv.Name)).Id(t.Name).Block(
			jen.Return(jen.Id(t.Name).ValuesFunc(func(g *jen.Group) {
				for _, p := range shared {
					g.Id(p[1].GoName).Op(":").Id("from").Dot(p[0].GoName)
				}
			})),
		)
		commentCode(f,
			"Stored values of version "+strconv.Itoa(pv.Version)+" of "+t.Name+" ("+pv.Name+") are read by converting them to "+t.Name+". Write this function in this package, in a file of your own:",
			"func "+pv.ConvertFuncName()+"(from "+pv.Name+", to *"+t.Name+") error",
			"to arrives holding the fields both versions share, copied by "+pv.CopyFuncName()+"; set the others"+unshared(t, shared)+". An error fails the read.")
		f.Var().Id("_").Func().Params(jen.Id("from").Id(pv.Name), jen.Id("to").Op("*").Id(t.Name)).Error().Op("=").Id(pv.ConvertFuncName())
		if t.WriteVersion != pv.Version {
			continue
		}
		comment(f, pv.CopyBackFuncName()+" returns the "+pv.Name+" holding the fields "+t.Name+" shares with it"+fieldList(shared, 1)+"; "+pv.ConvertBackFuncName()+" sets the rest.")
		f.Func().Id(pv.CopyBackFuncName()).Params(jen.Id("from").Id(t.Name)).Id(pv.Name).Block(
			jen.Return(jen.Id(pv.Name).ValuesFunc(func(g *jen.Group) {
				for _, p := range shared {
					g.Id(p[0].GoName).Op(":").Id("from").Dot(p[1].GoName)
				}
			})),
		)
		commentCode(f,
			"This schema writes version "+strconv.Itoa(pv.Version)+" of "+t.Name+" (write_version), so values are converted to "+pv.Name+" before they are stored. Write this function in this package, in a file of your own:",
			"func "+pv.ConvertBackFuncName()+"(from "+t.Name+", to *"+pv.Name+") error",
			"to arrives holding the fields both versions share, copied by "+pv.CopyBackFuncName()+"; set the others"+unsharedPrev(pv, shared)+". An error fails the write.")
		f.Var().Id("_").Func().Params(jen.Id("from").Id(t.Name), jen.Id("to").Op("*").Id(pv.Name)).Error().Op("=").Id(pv.ConvertBackFuncName())
	}
}

func fieldList(shared [][2]*schema.Field, side int) string {
	if len(shared) == 0 {
		return " (none)"
	}
	names := make([]string, len(shared))
	for i, p := range shared {
		names[i] = p[side].Name
	}
	return ": " + strings.Join(names, ", ")
}

func unshared(t *schema.TypeDef, shared [][2]*schema.Field) string {
	var names []string
	for _, f := range t.Fields {
		if !isShared(f, shared, 1) {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return " (none: the function may just return nil)"
	}
	return ": " + strings.Join(names, ", ")
}

func unsharedPrev(pv *schema.TypeDef, shared [][2]*schema.Field) string {
	var names []string
	for _, f := range pv.Fields {
		if !isShared(f, shared, 0) {
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return " (none: the function may just return nil)"
	}
	return ": " + strings.Join(names, ", ")
}

func isShared(f *schema.Field, shared [][2]*schema.Field, side int) bool {
	for _, p := range shared {
		if p[side] == f {
			return true
		}
	}
	return false
}

// versionedCodec is the codec.Versioned of a key whose type is versioned:
// newest is the codec of the newest version (evolved when it evolves).
func versionedCodec(k *schema.Key, newest *jen.Statement) *jen.Statement {
	t := k.Type.Def
	json := k.Encoding == schema.EncodingJSON
	plain := func(def *schema.TypeDef) *jen.Statement {
		if json {
			return jen.Qual(codecPkg, "JSON").Types(jen.Id(def.Name)).Values()
		}
		return jen.Qual(codecPkg, "MsgPack").Types(jen.Id(def.Name)).Values()
	}
	encodeAs := newest.Clone().Dot("Encode")
	if w := t.VersionOf(t.WriteVersion); w != t {
		encodeAs = jen.Qual(codecPkg, "Downgrade").Types(jen.Id(t.Name), jen.Id(w.Name)).Call(plain(w), jen.Id(w.CopyBackFuncName()), jen.Id(w.ConvertBackFuncName()))
	}
	return jen.Qual(codecPkg, "Versioned").Types(jen.Id(t.Name)).Values(jen.Dict{
		jen.Id("Name"):     jen.Lit(t.Name),
		jen.Id("JSON"):     jen.Lit(json),
		jen.Id("Write"):    jen.Lit(t.WriteVersion),
		jen.Id("Oldest"):   jen.Lit(t.OldestVersion()),
		jen.Id("EncodeAs"): encodeAs,
		jen.Id("Decoders"): jen.Map(jen.Int()).Func().Params(jen.Index().Byte()).Params(jen.Id(t.Name), jen.Error()).ValuesFunc(func(g *jen.Group) {
			for _, pv := range t.Previous {
				g.Line().Lit(pv.Version).Op(":").Qual(codecPkg, "Upgrade").Types(jen.Id(pv.Name), jen.Id(t.Name)).Call(plain(pv), jen.Id(pv.CopyFuncName()), jen.Id(pv.ConvertFuncName()))
			}
			g.Line().Lit(t.Version).Op(":").Add(newest.Clone().Dot("Decode"))
			g.Line()
		}),
	})
}
