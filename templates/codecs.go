package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// codecValue is the zero-size codec value that stores a key's values with
// its encoding, e.g. codec.MsgPack[SetPoint]{}.
func codecValue(k *schema.Key) *jen.Statement {
	t := k.Type
	if t.Kind == schema.KindStruct && t.Def.Version > 0 {
		inner := jen.Qual(codecPkg, "MsgPack").Types(goType(t)).Values()
		if k.Encoding == schema.EncodingJSON {
			inner = jen.Qual(codecPkg, "JSON").Types(goType(t)).Values()
		}
		return versionedCodec(k, evolvedCodec(k, inner))
	}
	switch k.Encoding {
	case schema.EncodingJSON:
		return evolvedCodec(k, jen.Qual(codecPkg, "JSON").Types(goType(t)).Values())
	case schema.EncodingBytes:
		return jen.Qual(codecPkg, "Bytes").Values()
	case schema.EncodingString:
		return textCodec(t)
	}
	return evolvedCodec(k, jen.Qual(codecPkg, "MsgPack").Types(goType(t)).Values())
}

// textCodec picks the text codec of a scalar. Enums and go_types go
// through their own MarshalText/UnmarshalText, so that a stored value
// outside an enum fails to decode instead of passing unchecked.
func textCodec(t *schema.Type) *jen.Statement {
	switch {
	case t.Kind == schema.KindString:
		return jen.Qual(codecPkg, "String").Types(jen.String()).Values()
	case t.Kind == schema.KindBool:
		return jen.Qual(codecPkg, "Bool").Types(jen.Bool()).Values()
	case t.Kind.IsSigned():
		return jen.Qual(codecPkg, "Int").Types(goType(t)).Values()
	case t.Kind.IsInteger():
		return jen.Qual(codecPkg, "Uint").Types(goType(t)).Values()
	case t.Kind == schema.KindFloat32 || t.Kind == schema.KindFloat64:
		return jen.Qual(codecPkg, "Float").Types(goType(t)).Values()
	case t.Kind == schema.KindTime:
		return jen.Qual(codecPkg, "Time").Values()
	case t.Kind == schema.KindDuration:
		return jen.Qual(codecPkg, "Duration").Values()
	}
	// Enums and go_types.
	return jen.Qual(codecPkg, "Text").Types(goType(t), jen.Op("*").Add(goType(t))).Values()
}

// encodingDoc describes a key's encoding for its doc comment.
func encodingDoc(k *schema.Key) string {
	switch k.Encoding {
	case schema.EncodingString:
		return "stored as text"
	case schema.EncodingBytes:
		return "stored as raw bytes"
	case schema.EncodingJSON:
		return "encoded as JSON"
	}
	return "encoded as MessagePack"
}
