package schema

import (
	"regexp"
	"strings"
	"time"
)

// Schema is a loaded and validated ssgen.yaml. Every slice keeps the
// declaration order of the file, so code generated from it is stable when
// the file is only appended to.
type Schema struct {
	Filename string
	Version  int
	Package  string   // Go package name of the generated code
	Doc      string   // optional package documentation
	Encoding Encoding // default value encoding (msgpack when not written)

	Types  []*TypeDef // declared types
	Groups []*Group   // groups of keys sharing a path prefix and its parameters
	Keys   []*Key     // top-level keys (not in any group)
	Locks  []*Lock    // top-level locks (not in any group)
	Roles  []*Role    // who may read and write which keys and locks
}

// Type returns the declared type with the given name, or nil.
func (s *Schema) Type(name string) *TypeDef {
	for _, t := range s.Types {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Group returns the group with the given name, or nil.
func (s *Schema) Group(name string) *Group {
	for _, g := range s.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// AllKeys returns every key of the schema: the top-level keys first, then
// each group's keys, each in declaration order.
func (s *Schema) AllKeys() []*Key {
	out := append([]*Key(nil), s.Keys...)
	for _, g := range s.Groups {
		out = append(out, g.Keys...)
	}
	return out
}

// AllLocks returns every lock of the schema, ordered like AllKeys.
func (s *Schema) AllLocks() []*Lock {
	out := append([]*Lock(nil), s.Locks...)
	for _, g := range s.Groups {
		out = append(out, g.Locks...)
	}
	return out
}

// Encoding is how a key's value is turned into the bytes stored.
type Encoding string

const (
	// EncodingMsgpack encodes any value type with MessagePack (the default).
	EncodingMsgpack Encoding = "msgpack"
	// EncodingJSON encodes any value type as JSON; time is RFC 3339.
	EncodingJSON Encoding = "json"
	// EncodingString stores a string-like or text-encodable scalar as its
	// text: strings and enums as is, numbers and bools in Go syntax
	// (strconv), time as RFC 3339, duration as time.Duration.String, a
	// go_type through its encoding.TextMarshaler.
	EncodingString Encoding = "string"
	// EncodingBytes stores a bytes value as is.
	EncodingBytes Encoding = "bytes"
)

var encodings = []Encoding{EncodingMsgpack, EncodingJSON, EncodingString, EncodingBytes}

// Kind classifies a Type.
type Kind int

// The kinds of value types. KindStruct, KindEnum and KindGoType are the
// kinds of declared types (TypeDef).
const (
	KindInvalid Kind = iota
	KindBool
	KindInt
	KindInt8
	KindInt16
	KindInt32
	KindInt64
	KindUint
	KindUint8
	KindUint16
	KindUint32
	KindUint64
	KindFloat32
	KindFloat64
	KindString
	KindBytes
	KindTime     // time.Time
	KindDuration // time.Duration
	KindList     // []Elem
	KindMap      // map[string]Elem
	KindStruct   // declared struct (Def)
	KindEnum     // declared enum (Def)
	KindGoType   // declared go_type (Def)
)

var scalarKinds = map[string]Kind{
	"bool": KindBool, "int": KindInt, "int8": KindInt8, "int16": KindInt16,
	"int32": KindInt32, "int64": KindInt64, "uint": KindUint, "uint8": KindUint8,
	"uint16": KindUint16, "uint32": KindUint32, "uint64": KindUint64,
	"float32": KindFloat32, "float64": KindFloat64, "string": KindString,
	"bytes": KindBytes, "time": KindTime, "duration": KindDuration,
}

// String returns the schema spelling of a scalar kind ("int32", "time") or
// a descriptive word for the others ("list", "struct").
func (k Kind) String() string {
	for name, kk := range scalarKinds {
		if kk == k {
			return name
		}
	}
	switch k {
	case KindList:
		return "list"
	case KindMap:
		return "map"
	case KindStruct:
		return "struct"
	case KindEnum:
		return "enum"
	case KindGoType:
		return "go_type"
	}
	return "invalid"
}

// IsInteger reports whether k is one of the signed or unsigned integer kinds.
func (k Kind) IsInteger() bool { return k >= KindInt && k <= KindUint64 }

// IsSigned reports whether k is a signed integer kind.
func (k Kind) IsSigned() bool { return k >= KindInt && k <= KindInt64 }

// Type is a value type as written in the schema: a scalar, a list or map of
// a value type, or a reference to a declared type.
type Type struct {
	Kind Kind
	Elem *Type    // element type of KindList and KindMap
	Def  *TypeDef // the declared type of KindStruct, KindEnum, KindGoType
	Pos  Pos      // where the type is written
}

// String returns the canonical schema spelling: "float64", "[]SetPoint",
// "map[string][]int".
func (t *Type) String() string {
	switch t.Kind {
	case KindList:
		return "[]" + t.Elem.String()
	case KindMap:
		return "map[string]" + t.Elem.String()
	case KindStruct, KindEnum, KindGoType:
		return t.Def.Name
	}
	return t.Kind.String()
}

// TypeDef is a declared type: a struct, an enum or a go_type.
type TypeDef struct {
	Name string // exported Go identifier, the generated type's name
	Doc  string
	Kind Kind // KindStruct, KindEnum or KindGoType
	Pos  Pos

	Fields []*Field     // KindStruct, in declaration order (the wire order)
	Values []*EnumValue // KindEnum, in declaration order
	GoType *GoTypeRef   // KindGoType

	// Removed lists the wire names of fields dropped on purpose
	// (KindStruct): stored values holding them decode without them, and
	// Compare accepts their removal. No field of the type may use one.
	Removed []Name

	// Version is the version of a versioned struct (version: N), 0 for
	// a type without one. Values carry it in the stamp field
	// VersionField; a value without the stamp is of the oldest declared
	// version.
	Version int
	// WriteVersion is the version written (write_version), Version
	// unless the schema names a previous one.
	WriteVersion int
	// Previous holds the earlier versions of a versioned struct
	// (previous), oldest first: each a KindStruct whose Name is the Go
	// type generated for it (SetPointV1), with Of set to this type.
	Previous []*TypeDef
	// Of is, for a previous version, the versioned type; nil otherwise.
	Of *TypeDef
}

// Name is a name written in the schema with where it is written.
type Name struct {
	Name string
	Pos  Pos
}

// Evolves reports whether values of the struct read by this schema may
// differ from what it writes: a field renamed from an earlier name or
// given a default for values stored without it.
func (t *TypeDef) Evolves() bool {
	for _, f := range t.Fields {
		if len(f.RenamedFrom) > 0 || f.Default != nil {
			return true
		}
	}
	return false
}

// EnumRenames reports whether an enum declares earlier spellings of its
// values.
func (t *TypeDef) EnumRenames() bool {
	for _, v := range t.Values {
		if len(v.RenamedFrom) > 0 {
			return true
		}
	}
	return false
}

// Field is one field of a declared struct.
type Field struct {
	Name     string // wire name: the json and msgpack tag name, as written in YAML
	GoName   string // exported Go field name (derived from Name unless go_name is given)
	Doc      string
	Type     *Type
	Optional bool // may be absent on the wire (omitempty); required fields are always written
	Pos      Pos

	// RenamedFrom lists earlier wire names of the field: a stored value
	// holding one of them (and not Name) decodes it into this field. New
	// writes use Name.
	RenamedFrom []Name
	// Default is the value a stored value without the field decodes
	// with; nil when none (the zero value). Only a required field has one.
	Default *Default

	// Immutable (immutable: true) says that once the field holds a value,
	// no write through a read-modify-write path may change it or drop it.
	Immutable bool
	// Monotonic (monotonic: increasing | non_decreasing) says that a
	// write may only move the field's value up; "" when none.
	Monotonic Monotonic
}

// Monotonic is a field's monotonic transition rule.
type Monotonic string

const (
	// MonotonicIncreasing: every new value is greater than the old one.
	MonotonicIncreasing Monotonic = "increasing"
	// MonotonicNonDecreasing: every new value is greater than or equal
	// to the old one.
	MonotonicNonDecreasing Monotonic = "non_decreasing"
)

var monotonics = []string{string(MonotonicIncreasing), string(MonotonicNonDecreasing)}

// HasRules reports whether the field carries a transition rule.
func (f *Field) HasRules() bool { return f.Immutable || f.Monotonic != "" }

// HasTransitionRules reports whether a write to a value of the struct
// can break a transition rule: a field of it has one, or a field's
// struct type (not through a list or map) has, at any depth.
func (t *TypeDef) HasTransitionRules() bool { return t.hasRules(map[*TypeDef]bool{}) }

func (t *TypeDef) hasRules(seen map[*TypeDef]bool) bool {
	if t == nil || t.Kind != KindStruct || seen[t] {
		return false
	}
	seen[t] = true
	for _, f := range t.Fields {
		if f.HasRules() {
			return true
		}
		if f.Type != nil && f.Type.Kind == KindStruct && f.Type.Def.hasRules(seen) {
			return true
		}
	}
	return false
}

// ImmutableKind reports whether a field of kind k may be immutable:
// scalars, enums, bytes, times and durations (values compared as a
// whole), not structs, lists, maps or go_types.
func ImmutableKind(k Kind) bool {
	return k >= KindBool && k <= KindDuration || k == KindEnum
}

// MonotonicKind reports whether a field of kind k may be monotonic:
// numbers, times and durations.
func MonotonicKind(k Kind) bool {
	return k >= KindInt && k <= KindFloat64 || k == KindTime || k == KindDuration
}

// Default is a field's default value.
type Default struct {
	// JSON is the value in the JSON form of the generated Go type (a
	// duration as nanoseconds, bytes as base64, a time as RFC 3339),
	// compact, map keys sorted: what encoding/json writes for it.
	JSON string
	// Text is the default for people to read: a scalar as written in the
	// schema ("90s", "heat"), anything else as JSON.
	Text string
	Pos  Pos
}

// EnumValue is one value of a declared enum. On the wire an enum is its
// value string, in every encoding.
type EnumValue struct {
	Value  string // wire form
	GoName string // Go constant name: type name + exported value ("ModeHeat")
	Doc    string
	Pos    Pos
	// RenamedFrom lists earlier spellings of the value: stored values
	// holding one decode as this value; new writes use Value.
	RenamedFrom []Name
}

// GoTypeRef names a user Go type that brings its own codec: it must
// implement the interfaces of the encodings it is used with (msgpack:
// msgpack.CustomEncoder/CustomDecoder or plain struct encoding; json:
// json.Marshaler/Unmarshaler or plain; string: encoding.TextMarshaler and
// TextUnmarshaler).
type GoTypeRef struct {
	ImportPath string // "example.com/units"
	Name       string // "Celsius"
}

// String returns "import/path.Name".
func (g *GoTypeRef) String() string { return g.ImportPath + "." + g.Name }

// Param is a parameter of a path: a function argument of the generated
// accessor. A parameter value renders into exactly one path segment, so a
// generated accessor must reject an empty value and one containing '/'
// (the collision rules rely on it), and one that its Regexp does not match.
type Param struct {
	Name    string // Go identifier of the argument, as written
	Doc     string
	Type    *Type          // KindString, an integer kind, or KindEnum
	Pattern string         // as written; "" when none
	Regexp  *regexp.Regexp // Pattern anchored to the whole value; nil when none
	Pos     Pos
}

// Segment is one '/'-separated part of a path: a literal or a parameter.
type Segment struct {
	Literal string // when Param is nil
	Param   *Param
}

// Path is a key path template: "thermostats/{id}". A parameter fills a
// whole segment.
type Path struct {
	Segments []Segment
	Pos      Pos
}

// String renders the template back: literals as is, params as {name}.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p.Segments {
		if i > 0 {
			b.WriteByte('/')
		}
		if s.Param != nil {
			b.WriteString("{" + s.Param.Name + "}")
		} else {
			b.WriteString(s.Literal)
		}
	}
	return b.String()
}

// join returns a then b as one path; b's position is kept.
func join(a, b Path) Path {
	segs := make([]Segment, 0, len(a.Segments)+len(b.Segments))
	segs = append(segs, a.Segments...)
	segs = append(segs, b.Segments...)
	return Path{Segments: segs, Pos: b.Pos}
}

// Group is a set of keys and locks under one path prefix, typically one
// entity ("the thermostat {id}"). Groups do not nest: a group path may
// hold several parameters instead ("sites/{site}/thermostats/{id}").
type Group struct {
	Name   string // exported Go identifier: the accessor on the store
	Doc    string
	Path   Path     // prefix of every key and lock in the group
	Params []*Param // parameters of Path, in declaration order
	Keys   []*Key
	Locks  []*Lock
	Pos    Pos
	// MovedFrom lists the group's earlier paths (renamed_from: one, or a
	// list, latest first), with the same parameters; empty when the group
	// did not move. Every key of the group moved with it (see
	// Key.MovedFrom).
	MovedFrom []Path
}

// Moved reports whether the group declares an earlier path.
func (g *Group) Moved() bool { return len(g.MovedFrom) > 0 }

// Key is one state store key holding a typed value.
type Key struct {
	Name     string // exported Go identifier: the accessor
	Doc      string
	Group    *Group   // nil for a top-level key
	Path     Path     // own path, relative to the group's
	Params   []*Param // parameters of the own Path, in declaration order
	Type     *Type
	Encoding Encoding // effective: the key's own or the schema default
	// EncodingSet reports whether the key names its encoding itself.
	EncodingSet bool
	TTL         time.Duration // expiry of every Set; 0 when the key persists
	Guard       *Lock         // lock whose fencing token protects writes; nil when none
	// Persist asks the broker to keep every write of the key on disk
	// (the aio-persistence user property).
	Persist bool
	Pos     Pos
	// MovedFrom lists the key's earlier own paths (renamed_from: one, or
	// a list, latest first), relative to the group's like Path and with
	// the same parameters; empty when the key did not move. Reads fall
	// back to them in order while the key is absent; writes remove them.
	MovedFrom []Path
}

// Moved reports whether the key has an earlier path: its own
// renamed_from, or its group's.
func (k *Key) Moved() bool {
	return len(k.MovedFrom) > 0 || k.Group != nil && k.Group.Moved()
}

// FullMovedFrom returns the key's first earlier full path (see
// FullMovedFroms), or a path without segments when it did not move.
func (k *Key) FullMovedFrom() Path {
	if all := k.FullMovedFroms(); len(all) > 0 {
		return all[0]
	}
	return Path{}
}

// FullMovedFroms returns the key's earlier full paths, in the order reads
// fall back to them: each of the group's earlier paths (or its path, when
// the group did not move) followed by each of the key's earlier own paths
// (or its path, when only the group moved); nil when the key did not
// move.
func (k *Key) FullMovedFroms() []Path {
	if !k.Moved() {
		return nil
	}
	owns := k.MovedFrom
	if len(owns) == 0 {
		owns = []Path{k.Path}
	}
	if k.Group == nil {
		return owns
	}
	bases := k.Group.MovedFrom
	if len(bases) == 0 {
		bases = []Path{k.Group.Path}
	}
	var out []Path
	for _, base := range bases {
		for _, own := range owns {
			p := join(base, own)
			if len(k.MovedFrom) == 0 {
				p.Pos = base.Pos
			}
			out = append(out, p)
		}
	}
	return out
}

// FullPath returns the group's path followed by the key's own.
func (k *Key) FullPath() Path { return fullPath(k.Group, k.Path) }

// AllParams returns the group's parameters, then the key's own: the
// argument order of the generated accessor chain.
func (k *Key) AllParams() []*Param { return allParams(k.Group, k.Params) }

// QualifiedName is "Group.Key", or "Key" for a top-level key.
func (k *Key) QualifiedName() string { return qualified(k.Group, k.Name) }

// Lock is a state store key used as a lease: its holder writes it with NX
// or NEX and a TTL, and its version is the fencing token of guarded keys.
type Lock struct {
	Name   string
	Doc    string
	Group  *Group
	Path   Path
	Params []*Param
	TTL    time.Duration // lease duration; always > 0
	Pos    Pos
}

// FullPath returns the group's path followed by the lock's own.
func (l *Lock) FullPath() Path { return fullPath(l.Group, l.Path) }

// AllParams returns the group's parameters, then the lock's own.
func (l *Lock) AllParams() []*Param { return allParams(l.Group, l.Params) }

// QualifiedName is "Group.Lock", or "Lock" for a top-level lock.
func (l *Lock) QualifiedName() string { return qualified(l.Group, l.Name) }

func fullPath(g *Group, p Path) Path {
	if g == nil {
		return p
	}
	return join(g.Path, p)
}

func allParams(g *Group, own []*Param) []*Param {
	if g == nil {
		return own
	}
	out := make([]*Param, 0, len(g.Params)+len(own))
	out = append(out, g.Params...)
	return append(out, own...)
}

func qualified(g *Group, name string) string {
	if g == nil {
		return name
	}
	return g.Name + "." + name
}

// GoImports returns the import paths of the declared go_types, each once,
// in declaration order: the imports generated code needs for them.
func (s *Schema) GoImports() []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range s.Types {
		if t.GoType != nil && !seen[t.GoType.ImportPath] {
			seen[t.GoType.ImportPath] = true
			out = append(out, t.GoType.ImportPath)
		}
	}
	return out
}

// Spelling returns the current value of an enum spelled s: s itself when
// it is a declared value, the value it was renamed to when it is an
// earlier spelling (renamed_from), and false otherwise.
func (t *TypeDef) Spelling(s string) (string, bool) {
	for _, v := range t.Values {
		if v.Value == s {
			return s, true
		}
	}
	for _, v := range t.Values {
		for _, r := range v.RenamedFrom {
			if r.Name == s {
				return v.Value, true
			}
		}
	}
	return "", false
}
