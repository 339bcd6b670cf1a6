package schema

import "strconv"

// What Go type a schema value type becomes lives here, once. The generator
// (package templates) spells these types in the code it writes, and
// internal/schemaval builds the same types with reflection to read and
// write values as that code does; both walk a type with BuildGoType and
// BuildGoFieldType, so they cannot disagree. The rules:
//
//   - a scalar is the Go type GoScalar names (int8, string, []byte,
//     time.Time, time.Duration, ...);
//   - a list is a slice of its element, a map a map from string to its
//     element;
//   - a struct or an enum is the type generated under its name (an enum is
//     a string type), a go_type the Go type it names;
//   - a struct field is named GoName, tagged GoStructTag, and is a pointer
//     when GoPointer says so.

// GoTypeBuilder builds Go types in one representation T: code to print,
// a reflect.Type. BuildGoType calls it bottom up.
type GoTypeBuilder[T any] interface {
	// Scalar is the type of a scalar kind, as GoScalar names it.
	Scalar(importPath, name string) T
	// Slice is []elem.
	Slice(elem T) T
	// Map is map[string]elem.
	Map(elem T) T
	// Pointer is *elem.
	Pointer(elem T) T
	// Declared is the type of a declared type: a struct or enum generated
	// as def.Name, or a go_type's def.GoType.
	Declared(def *TypeDef) T
}

// BuildGoType returns the Go type of t, built by b.
func BuildGoType[T any](b GoTypeBuilder[T], t *Type) T {
	switch t.Kind {
	case KindList:
		return b.Slice(BuildGoType(b, t.Elem))
	case KindMap:
		return b.Map(BuildGoType(b, t.Elem))
	case KindStruct, KindEnum, KindGoType:
		return b.Declared(t.Def)
	}
	return b.Scalar(t.Kind.GoScalar())
}

// BuildGoFieldType returns the Go type of struct field f, built by b: its
// type, behind a pointer when f.GoPointer.
func BuildGoFieldType[T any](b GoTypeBuilder[T], f *Field) T {
	t := BuildGoType(b, f.Type)
	if f.GoPointer() {
		return b.Pointer(t)
	}
	return t
}

// GoScalar names the Go type of a scalar kind: its import path ("" for a
// predeclared type) and its spelling in that package ("int8", "[]byte",
// "Time"). Both are empty for a kind that is not a scalar.
func (k Kind) GoScalar() (importPath, name string) {
	switch k {
	case KindBytes:
		return "", "[]byte"
	case KindTime:
		return "time", "Time"
	case KindDuration:
		return "time", "Duration"
	case KindList, KindMap, KindStruct, KindEnum, KindGoType, KindInvalid:
		return "", ""
	}
	// The other scalars are spelled in the schema as in Go.
	return "", k.String()
}

// GoNilable reports whether the Go type of kind k has nil as its zero
// value (slices, maps and []byte), so that generated code writes a value
// never set as nil.
func (k Kind) GoNilable() bool {
	return k == KindList || k == KindMap || k == KindBytes
}

// GoPointer reports whether f's Go field is a pointer: an optional field
// whose zero value omitempty cannot recognise (a struct, a time, a
// go_type). The pointer also breaks the self-reference an optional field
// allows.
func (f *Field) GoPointer() bool {
	if !f.Optional {
		return false
	}
	switch f.Type.Kind {
	case KindStruct, KindTime, KindGoType:
		return true
	}
	return false
}

// goTagKeys are the struct tag keys of a generated struct field, sorted
// (as Go source writes them); each holds GoTag.
var goTagKeys = [...]string{"json", "msgpack"}

// GoTag is the value of f's struct tags: its wire name, with ",omitempty"
// when it is optional.
func (f *Field) GoTag() string {
	if f.Optional {
		return f.Name + ",omitempty"
	}
	return f.Name
}

// GoTags returns f's struct tags as key → value: GoTag under "json" and
// "msgpack", the keys both encoders read.
func (f *Field) GoTags() map[string]string {
	tags := make(map[string]string, len(goTagKeys))
	for _, k := range goTagKeys {
		tags[k] = f.GoTag()
	}
	return tags
}

// GoStructTag returns f's struct tag as Go source writes it between the
// backquotes: `json:"name,omitempty" msgpack:"name,omitempty"`.
func (f *Field) GoStructTag() string {
	var s string
	for i, k := range goTagKeys {
		if i > 0 {
			s += " "
		}
		s += k + ":" + strconv.Quote(f.GoTag())
	}
	return s
}
