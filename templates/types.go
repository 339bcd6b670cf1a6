package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// Import paths the generated code refers to.
const (
	runtimePkg = "github.com/ssgen/ssgen/runtime"
	codecPkg   = "github.com/ssgen/ssgen/runtime/codec"
	msgpackPkg = "github.com/vmihailenco/msgpack/v5"
)

// goType is the Go spelling of a schema value type.
func goType(t *schema.Type) *jen.Statement {
	switch t.Kind {
	case schema.KindBytes:
		return jen.Index().Byte()
	case schema.KindTime:
		return jen.Qual("time", "Time")
	case schema.KindDuration:
		return jen.Qual("time", "Duration")
	case schema.KindList:
		return jen.Index().Add(goType(t.Elem))
	case schema.KindMap:
		return jen.Map(jen.String()).Add(goType(t.Elem))
	case schema.KindStruct, schema.KindEnum:
		return jen.Id(t.Def.Name)
	case schema.KindGoType:
		return jen.Qual(t.Def.GoType.ImportPath, t.Def.GoType.Name)
	}
	// Scalars are spelled in the schema as in Go.
	return jen.Id(t.Kind.String())
}

// fieldType is the Go type of a struct field. Optional fields whose zero
// value omitempty cannot recognise (structs, times, go_types) become
// pointers, which also breaks the self-reference an optional field allows.
func fieldType(f *schema.Field) *jen.Statement {
	if f.Optional {
		switch f.Type.Kind {
		case schema.KindStruct, schema.KindTime, schema.KindGoType:
			return jen.Op("*").Add(goType(f.Type))
		}
	}
	return goType(f.Type)
}
