package templates

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitEnum declares an enum as a string type with one constant per value.
// Its text and MessagePack forms are the value string, and both refuse a
// value the schema does not declare, so no encoding can carry one into or
// out of the store.
func emitEnum(f *jen.File, t *schema.TypeDef) {
	name := t.Name
	r := "v"
	comment(f, name+" is an enum of the schema.", sentence(t.Doc), name+" is stored as its value string in every encoding; encoding or decoding an undeclared value fails with a *runtime.EnumError; inside a struct, the codec error around it names the field (Type.field).")
	f.Type().Id(name).String()

	comment(f, "The values of "+name+".")
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range t.Values {
			comment(g, fmt.Sprintf("%s is %q.", v.GoName, v.Value)+withSpace(sentence(v.Doc)))
			g.Id(v.GoName).Id(name).Op("=").Lit(v.Value)
		}
	})

	// An enum with earlier spellings reads them too; it writes only the
	// current ones.
	set := func(s jen.Code) jen.Code {
		return jen.Qual(runtimePkg, "SetEnum").Call(jen.Id(r), s)
	}
	readNote := ""
	if t.EnumRenames() {
		enumRenames(f, t)
		set = func(s jen.Code) jen.Code {
			return jen.Qual(runtimePkg, "SetEnumRenamed").Call(jen.Id(r), s, jen.Id(t.RenamedVarName()))
		}
		readNote = " An earlier spelling of a value (renamed_from) reads as the value."
	}

	comment(f, "String returns the value string of "+r+".")
	f.Func().Params(jen.Id(r).Id(name)).Id("String").Params().String().Block(
		jen.Return(jen.String().Call(jen.Id(r))),
	)

	comment(f, "Valid reports whether "+r+" is one of the declared values of "+name+".")
	f.Func().Params(jen.Id(r).Id(name)).Id("Valid").Params().Bool().Block(
		jen.Switch(jen.Id(r)).Block(
			jen.CaseFunc(func(g *jen.Group) {
				for _, v := range t.Values {
					g.Id(v.GoName)
				}
			}).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.False()),
	)

	// The checks are runtime.ParseEnum, CheckEnum and SetEnum, written
	// once: each method here is the enum's own face of one of them.
	check := func(ret ...jen.Code) jen.Code {
		return jen.If(jen.Err().Op(":=").Qual(runtimePkg, "CheckEnum").Call(jen.Id(r)), jen.Err().Op("!=").Nil()).Block(jen.Return(ret...))
	}

	parse := t.ParserName()
	comment(f, parse+" returns the "+name+" spelled s, or a *runtime.EnumError when s is not one of its declared values.")
	f.Func().Id(parse).Params(jen.Id("s").String()).Params(jen.Id(name), jen.Error()).Block(
		jen.Return(jen.Qual(runtimePkg, "ParseEnum").Types(jen.Id(name)).Call(jen.Id("s"))),
	)

	comment(f, "MarshalText implements encoding.TextMarshaler; it refuses an undeclared value.")
	f.Func().Params(jen.Id(r).Id(name)).Id("MarshalText").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		check(jen.Nil(), jen.Err()),
		jen.Return(jen.Index().Byte().Call(jen.Id(r)), jen.Nil()),
	)

	comment(f, "UnmarshalText implements encoding.TextUnmarshaler; it refuses an undeclared value and leaves "+r+" unchanged then."+readNote)
	f.Func().Params(jen.Id(r).Op("*").Id(name)).Id("UnmarshalText").Params(jen.Id("text").Index().Byte()).Error().Block(
		jen.Return(set(jen.String().Call(jen.Id("text")))),
	)

	// Without these msgpack would use MarshalText and write the value as
	// binary data (bin), not as the string other readers expect.
	comment(f, "EncodeMsgpack writes "+r+" as a MessagePack string; it refuses an undeclared value.")
	f.Func().Params(jen.Id(r).Id(name)).Id("EncodeMsgpack").Params(jen.Id("enc").Op("*").Qual(msgpackPkg, "Encoder")).Error().Block(
		check(jen.Err()),
		jen.Return(jen.Id("enc").Dot("EncodeString").Call(jen.String().Call(jen.Id(r)))),
	)

	comment(f, "DecodeMsgpack reads a MessagePack string; it refuses an undeclared value and leaves "+r+" unchanged then."+readNote)
	f.Func().Params(jen.Id(r).Op("*").Id(name)).Id("DecodeMsgpack").Params(jen.Id("dec").Op("*").Qual(msgpackPkg, "Decoder")).Error().Block(
		jen.List(jen.Id("s"), jen.Err()).Op(":=").Id("dec").Dot("DecodeString").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(set(jen.Id("s"))),
	)
}

func withSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}
