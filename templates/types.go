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

// goType is the Go spelling of a schema value type. Which Go type a
// schema type becomes is decided in package schema (schema.BuildGoType),
// which internal/schemaval reads too; this only spells it.
func goType(t *schema.Type) *jen.Statement { return schema.BuildGoType(spelling{}, t) }

// fieldType is the Go spelling of a struct field's type: a pointer where
// schema.Field.GoPointer says so.
func fieldType(f *schema.Field) *jen.Statement { return schema.BuildGoFieldType(spelling{}, f) }

// spelling spells Go types in generated code.
type spelling struct{}

func (spelling) Scalar(importPath, name string) *jen.Statement {
	if importPath != "" {
		return jen.Qual(importPath, name)
	}
	return jen.Id(name)
}

func (spelling) Slice(elem *jen.Statement) *jen.Statement   { return jen.Index().Add(elem) }
func (spelling) Map(elem *jen.Statement) *jen.Statement     { return jen.Map(jen.String()).Add(elem) }
func (spelling) Pointer(elem *jen.Statement) *jen.Statement { return jen.Op("*").Add(elem) }

func (spelling) Declared(def *schema.TypeDef) *jen.Statement {
	if def.Kind == schema.KindGoType {
		return jen.Qual(def.GoType.ImportPath, def.GoType.Name)
	}
	return jen.Id(def.Name)
}
