package schemaval

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/schema"
)

// MaxDepth is how many levels of itself a recursive struct type may hold
// in a value schemaval reads or writes (reflection cannot build a Go type
// that contains itself, so the levels are unrolled).
const MaxDepth = 32

// The Go types of the mirror: types shaped like the ones generated code
// declares, built with reflection, so that the msgpack and encoding/json
// libraries treat a value exactly as they treat the generated type's.

// enumText mirrors a generated enum type: a string kind whose pointer
// decodes itself. Like the generated DecodeMsgpack and UnmarshalText it
// refuses a present but empty value, while a MessagePack nil or a JSON
// null leaves it empty (the libraries do not call the method then); the
// declared values are checked afterwards, by the schema's list.
type enumText string

var errEmptyEnum = errors.New("empty string is not a declared enum value")

func (e *enumText) DecodeMsgpack(dec *msgpack.Decoder) error {
	s, err := dec.DecodeString()
	if err != nil {
		return err
	}
	return e.UnmarshalText([]byte(s))
}

func (e *enumText) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return errEmptyEnum
	}
	*e = enumText(b)
	return nil
}

// tooDeep stands where a recursive type would nest deeper than MaxDepth.
// Only an absent value (nil, null, an empty list or map) fits there.
type tooDeep struct{}

var errTooDeep = errors.New("nested deeper than " + strconv.Itoa(MaxDepth) + " levels of a recursive type")

func (*tooDeep) DecodeMsgpack(*msgpack.Decoder) error { return errTooDeep }
func (tooDeep) EncodeMsgpack(*msgpack.Encoder) error  { return errTooDeep }
func (*tooDeep) UnmarshalJSON([]byte) error           { return errTooDeep }
func (tooDeep) MarshalJSON() ([]byte, error)          { return nil, errTooDeep }

var (
	enumType    = reflect.TypeFor[enumText]()
	tooDeepType = reflect.TypeFor[tooDeep]()
	rawJSONType = reflect.TypeFor[json.RawMessage]()
	anyType     = reflect.TypeFor[any]()
	stringType  = reflect.TypeFor[string]()
)

// goScalars are the Go types schema.Kind.GoScalar names, by import path
// and name.
var goScalars = map[goName]reflect.Type{
	{"", "bool"}: reflect.TypeFor[bool](), {"", "string"}: stringType,
	{"", "int"}: reflect.TypeFor[int](), {"", "int8"}: reflect.TypeFor[int8](),
	{"", "int16"}: reflect.TypeFor[int16](), {"", "int32"}: reflect.TypeFor[int32](),
	{"", "int64"}: reflect.TypeFor[int64](), {"", "uint"}: reflect.TypeFor[uint](),
	{"", "uint8"}: reflect.TypeFor[uint8](), {"", "uint16"}: reflect.TypeFor[uint16](),
	{"", "uint32"}: reflect.TypeFor[uint32](), {"", "uint64"}: reflect.TypeFor[uint64](),
	{"", "float32"}: reflect.TypeFor[float32](), {"", "float64"}: reflect.TypeFor[float64](),
	{"", "[]byte"}: reflect.TypeFor[[]byte](), {"time", "Time"}: reflect.TypeFor[time.Time](),
	{"time", "Duration"}: reflect.TypeFor[time.Duration](),
}

type goName struct{ importPath, name string }

// mirror builds the Go types of one encoding (MessagePack or JSON: the
// only ones that hold structs, lists and maps).
type mirror struct {
	enc    schema.Encoding
	cyclic map[*schema.TypeDef]bool
	memo   map[memoKey]reflect.Type
}

// memoKey names a struct's mirror at one depth of recursion: the same
// struct at the same depth is the same Go type, which keeps the number of
// types linear in MaxDepth however many recursive fields a struct has.
type memoKey struct {
	def   *schema.TypeDef
	depth int
}

func newMirror(enc schema.Encoding) *mirror {
	return &mirror{enc: enc, cyclic: map[*schema.TypeDef]bool{}, memo: map[memoKey]reflect.Type{}}
}

// typeOf returns the mirror of t. depth counts the recursive structs
// entered on the way to t.
func (m *mirror) typeOf(t *schema.Type, depth int) reflect.Type {
	return schema.BuildGoType(mirrorAt{m, depth}, t)
}

// mirrorAt builds the Go types package schema says generated code declares
// (schema.BuildGoType), at one depth of recursion. Scalars, slices, maps
// and pointers are the generated ones; the declared types are stand-ins
// the libraries treat the same way.
type mirrorAt struct {
	m     *mirror
	depth int
}

func (mirrorAt) Scalar(importPath, name string) reflect.Type {
	return goScalars[goName{importPath, name}]
}

func (mirrorAt) Slice(elem reflect.Type) reflect.Type   { return reflect.SliceOf(elem) }
func (mirrorAt) Map(elem reflect.Type) reflect.Type     { return reflect.MapOf(stringType, elem) }
func (mirrorAt) Pointer(elem reflect.Type) reflect.Type { return reflect.PointerTo(elem) }

func (b mirrorAt) Declared(def *schema.TypeDef) reflect.Type {
	switch def.Kind {
	case schema.KindEnum:
		return enumType
	case schema.KindGoType:
		if b.m.enc == schema.EncodingJSON {
			return rawJSONType
		}
		return anyType
	}
	return b.m.structOf(def, b.depth)
}

func (m *mirror) structOf(def *schema.TypeDef, depth int) reflect.Type {
	if m.isCyclic(def) {
		if depth++; depth > MaxDepth {
			return tooDeepType
		}
	}
	key := memoKey{def, depth}
	if rt, ok := m.memo[key]; ok {
		return rt
	}
	fields := make([]reflect.StructField, len(def.Fields))
	for i, f := range def.Fields {
		fields[i] = reflect.StructField{
			Name: f.GoName,
			Type: schema.BuildGoFieldType(mirrorAt{m, depth}, f),
			Tag:  reflect.StructTag(f.GoStructTag()),
		}
	}
	rt := reflect.StructOf(fields)
	m.memo[key] = rt
	return rt
}

// isCyclic reports whether def can hold itself.
func (m *mirror) isCyclic(def *schema.TypeDef) bool {
	c, ok := m.cyclic[def]
	if !ok {
		c = reaches(def, def, map[*schema.TypeDef]bool{})
		m.cyclic[def] = c
	}
	return c
}

// reaches reports whether a value of struct from can hold a target.
func reaches(from, target *schema.TypeDef, seen map[*schema.TypeDef]bool) bool {
	if seen[from] {
		return false
	}
	seen[from] = true
	for _, f := range from.Fields {
		t := f.Type
		for t.Kind == schema.KindList || t.Kind == schema.KindMap {
			t = t.Elem
		}
		if t.Kind != schema.KindStruct {
			continue
		}
		if t.Def == target || reaches(t.Def, target, seen) {
			return true
		}
	}
	return false
}

// mayHoldMap mirrors runtime/codec's rule for when a MessagePack value is
// rewritten into canonical map order: when the generated type can hold a
// map, or a type with its own encoder (every generated enum has one).
func mayHoldMap(t *schema.Type, seen map[*schema.TypeDef]bool) bool {
	switch t.Kind {
	case schema.KindMap, schema.KindEnum, schema.KindGoType:
		return true
	case schema.KindList:
		return mayHoldMap(t.Elem, seen)
	case schema.KindStruct:
		if seen[t.Def] {
			return false
		}
		seen[t.Def] = true
		for _, f := range t.Def.Fields {
			if mayHoldMap(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
