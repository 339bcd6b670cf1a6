package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Evolution describes how values stored under earlier versions of a
// schema differ from what the current Go types write: fields renamed
// from earlier wire names, and defaults for fields that older values lack.
// Generated code declares one per package, as data; the logic that reads
// it is here, so that generated code and tools reading values without it
// (ssgen get, the console) apply the same rules.
//
// A field's removal needs no entry: MsgPack and JSON ignore stored fields
// the type does not declare. An enum's earlier spellings are handled by
// the enum type itself (runtime.SetEnumRenamed).
type Evolution struct {
	// Structs maps a struct's schema name to what changed in it, for
	// every struct that evolves or holds, at any depth, one that does.
	Structs map[string]StructEvolution
}

// StructEvolution lists the fields of one struct that read stored values
// differently: renamed or defaulted fields, and fields whose values hold
// an evolving struct.
type StructEvolution struct {
	Fields []FieldEvolution
}

// FieldEvolution is one field of a StructEvolution.
type FieldEvolution struct {
	Name string // the current wire name
	// RenamedFrom lists earlier wire names. A stored map holding one of
	// them, and not Name, reads its value as this field's; when several
	// are present, the last in stored order wins (as decoders let the last
	// of a repeated name win).
	RenamedFrom []string
	// Default is the JSON form of the value a stored map without the
	// field (under any of its names) reads; "" when none.
	Default string
	// Type is the shape of the field's type where it holds evolving
	// structs: a struct name of Structs, "[]" or "map[string]" before
	// one ("[]Zone", "map[string][]Zone"); "" when it holds none.
	Type string
}

// Evolved is the codec of a value type that holds evolving structs. It
// encodes with Codec, unchanged, and decodes stored bytes after bringing
// them to the current form described by Evolution: Type is the value
// type's shape in the Evolution's terms ("SetPoint", "[]SetPoint"). Codec
// must be MsgPack[T] or JSON[T]; with any other codec, or a nil
// Evolution, Evolved decodes as Codec does.
//
// Encoding stays deterministic: only decoding reads earlier forms. A
// stored value written by an earlier schema therefore differs byte for
// byte from the value it decodes to once written again; CompareAndSet
// compares through Current for that reason.
type Evolved[T any] struct {
	Codec     Codec[T]
	Evolution *Evolution
	Type      string
}

// ContentType returns Codec's content type.
func (c Evolved[T]) ContentType() string { return c.Codec.ContentType() }

// Encode encodes v with Codec.
func (c Evolved[T]) Encode(v T) ([]byte, error) { return c.Codec.Encode(v) }

// Decode upgrades data to the current form and decodes it with Codec.
// Bytes that are not a well-formed value of the encoding fail as Codec
// fails on them (nesting deeper than MaxDepth with ErrTooDeep); an upgrade
// that cannot be made fails too, never decoding data without it, and one
// that would insert more defaults than the stored size allows fails with
// ErrUpgradeLimit.
func (c Evolved[T]) Decode(data []byte) (T, error) {
	up, err := c.upgrade(data)
	if err != nil {
		var zero T
		if !errors.Is(err, ErrUpgradeLimit) {
			// Malformed bytes: fail as Codec fails on them (without
			// decoding a value the size of the limit first).
			if _, derr := c.Codec.Decode(data); derr != nil {
				return zero, derr
			}
		}
		return zero, &DecodeError{Codec: c.codecName(), Type: typeName[T](), Err: err}
	}
	return c.Codec.Decode(up)
}

func (c Evolved[T]) codecName() string {
	switch c.Codec.(type) {
	case JSON[T], *JSON[T]:
		return "json"
	}
	return "msgpack"
}

// Current returns the bytes the value stored as data encodes to today:
// data decoded, then encoded again.
func (c Evolved[T]) Current(data []byte) ([]byte, error) {
	v, err := c.Decode(data)
	if err != nil {
		return nil, err
	}
	return c.Encode(v)
}

func (c Evolved[T]) upgrade(data []byte) ([]byte, error) {
	if c.Evolution == nil || c.Type == "" {
		return data, nil
	}
	switch c.Codec.(type) {
	case MsgPack[T], *MsgPack[T]:
		return c.Evolution.UpgradeMsgPack(data, c.Type, reflect.TypeFor[T]())
	case JSON[T], *JSON[T]:
		return c.Evolution.UpgradeJSON(data, c.Type)
	}
	return data, nil
}

// Upgrader is implemented by codecs whose Decode reads more than the form
// their Encode writes (Evolved). Current returns the bytes a stored value
// encodes to today, so that a comparison of stored bytes with an encoded
// value can look past the form it was stored in.
type Upgrader interface {
	Current(data []byte) ([]byte, error)
}

// UpgradeMsgPack returns data, one MessagePack value of shape typ, in the
// form the current types read: earlier field names renamed, absent
// defaulted fields added. rt is the Go type the value decodes into; its
// fields (by msgpack tag) give the defaults their MessagePack form. data
// is returned unchanged when nothing in it needs a change; it is never
// modified. Malformed data is an error.
func (e *Evolution) UpgradeMsgPack(data []byte, typ string, rt reflect.Type) ([]byte, error) {
	if err := wellFormed(data); err != nil {
		return nil, err
	}
	u := mpUpgrader{e: e, c: canonicalizer{src: data}, budget: newBudget(len(data))}
	out, err := u.value(make([]byte, 0, len(data)+16), typ, rt, 0)
	if err != nil {
		return nil, err
	}
	if !u.changed {
		return data, nil
	}
	return out, nil
}

type mpUpgrader struct {
	e       *Evolution
	c       canonicalizer
	changed bool
	budget
}

// An upgrade inserts at most UpgradeDefaultsPerByte defaults per byte of
// the stored value plus UpgradeDefaultsSlack, and at most
// UpgradeBytesPerByte bytes of them per stored byte plus
// UpgradeBytesSlack; past either it fails with ErrUpgradeLimit. A stored
// empty map is one byte, and each default it lacks becomes a field of
// the decoded value (a list or map default an allocation of its own):
// without a bound, a 1 MB list of empty maps decoded to a 1 GB value.
const (
	UpgradeDefaultsPerByte = 1
	UpgradeDefaultsSlack   = 4096
	UpgradeBytesPerByte    = 16
	UpgradeBytesSlack      = 1 << 20
)

// ErrUpgradeLimit is matched (errors.Is) by the error of a decode whose
// upgrade would insert more defaults than the limits above allow.
var ErrUpgradeLimit = errors.New("codec: evolution: the defaults a stored value lacks exceed the upgrade limit")

// budget counts down the defaults an upgrade may still insert.
type budget struct {
	defaults, bytes int
}

func newBudget(n int) budget {
	return budget{defaults: UpgradeDefaultsPerByte*n + UpgradeDefaultsSlack, bytes: UpgradeBytesPerByte*n + UpgradeBytesSlack}
}

// spend takes one default of n bytes from the budget.
func (b *budget) spend(n int) error {
	b.defaults--
	b.bytes -= n
	if b.defaults < 0 || b.bytes < 0 {
		return ErrUpgradeLimit
	}
	return nil
}

// skip moves past one value, whose well-formedness was checked.
func (u *mpUpgrader) skip() error {
	for pending := 1; pending > 0; pending-- {
		size, count, isMap, err := u.c.header()
		if err != nil {
			return err
		}
		if count < 0 {
			u.c.pos += size
			continue
		}
		if isMap {
			count *= 2
		}
		pending += count
	}
	return nil
}

func (u *mpUpgrader) copyValue(out []byte) ([]byte, error) {
	start := u.c.pos
	if err := u.skip(); err != nil {
		return nil, err
	}
	return append(out, u.c.src[start:u.c.pos]...), nil
}

func elemType(rt reflect.Type) reflect.Type {
	for rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt != nil && (rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map || rt.Kind() == reflect.Array) {
		return rt.Elem()
	}
	return nil
}

func (u *mpUpgrader) value(out []byte, shape string, rt reflect.Type, depth int) ([]byte, error) {
	if shape == "" {
		return u.copyValue(out)
	}
	if depth >= MaxDepth { // not reached after wellFormed; kept as a guard
		return nil, tooDeep()
	}
	start := u.c.pos
	_, count, isMap, err := u.c.header()
	if err != nil {
		return nil, err
	}
	var want bool // the value has the container the shape expects
	elem, isList := strings.CutPrefix(shape, "[]")
	mapElem, isMapShape := strings.CutPrefix(shape, "map[string]")
	switch {
	case isList:
		want = count >= 0 && !isMap
	case isMapShape:
		want = isMap
	default:
		_, known := u.e.Structs[shape]
		want = isMap && known
	}
	if !want {
		// nil, or a value the decoder will refuse: leave it to it.
		u.c.pos = start
		return u.copyValue(out)
	}
	switch {
	case isList:
		out = append(out, u.c.src[start:u.c.pos]...)
		for range count {
			if out, err = u.value(out, elem, elemType(rt), depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case isMapShape:
		out = append(out, u.c.src[start:u.c.pos]...)
		for range count {
			if out, err = u.copyValue(out); err != nil {
				return nil, err
			}
			if out, err = u.value(out, mapElem, elemType(rt), depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return u.structValue(out, u.e.Structs[shape], rt, count, depth)
}

// structValue rewrites one stored map of an evolving struct, whose
// header (count entries) was read. It writes as it reads, so the work is
// linear in the value however deep structs nest: a map32 header whose
// count is patched at the end, then each entry as stored, except that an
// earlier name becomes the current one (dropped when the current name
// came first; decoders let the last of a repeated name win, so a current
// name stored after it wins anyway, and of several earlier names the last
// stored wins, as a repeated earlier name did for the older schema's
// decoder), then each absent defaulted field.
func (u *mpUpgrader) structValue(out []byte, se StructEvolution, rt reflect.Type, count, depth int) ([]byte, error) {
	for rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	at := len(out)
	out = append(out, 0xdf, 0, 0, 0, 0)
	flags := make([]bool, 2*len(se.Fields))
	seen := flags[:len(se.Fields)]    // under any name: no default
	current := flags[len(se.Fields):] // under the current name: earlier names dropped
	n := 0
	for range count {
		k0 := u.c.pos
		name, isStr, err := u.mpString()
		if err != nil {
			return nil, err
		}
		i := -1
		if isStr {
			i = fieldIndex(se, name, false)
		}
		if i < 0 && isStr {
			if j := renamedIndex(se, name, false); j >= 0 {
				u.changed = true
				if current[j] {
					if err := u.skip(); err != nil { // the current name came first
						return nil, err
					}
					continue
				}
				seen[j] = true
				out = appendMsgpackStr(out, se.Fields[j].Name)
				n++
				if out, err = u.value(out, se.Fields[j].Type, fieldType(rt, se.Fields[j].Name, "msgpack"), depth+1); err != nil {
					return nil, err
				}
				continue
			}
		}
		out = append(out, u.c.src[k0:u.c.pos]...)
		n++
		if i < 0 { // a field the type does not know (removed): kept, ignored by the decoder
			if out, err = u.copyValue(out); err != nil {
				return nil, err
			}
			continue
		}
		seen[i], current[i] = true, true
		if out, err = u.value(out, se.Fields[i].Type, fieldType(rt, se.Fields[i].Name, "msgpack"), depth+1); err != nil {
			return nil, err
		}
	}
	for i, f := range se.Fields {
		if seen[i] || f.Default == "" {
			continue
		}
		def, err := msgpackDefault(rt, f.Name, f.Default)
		if err != nil {
			return nil, err
		}
		u.changed = true
		if err := u.spend(len(f.Name) + len(def)); err != nil {
			return nil, err
		}
		out = appendMsgpackStr(out, f.Name)
		out = append(out, def...)
		n++
	}
	out[at+1], out[at+2], out[at+3], out[at+4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return out, nil
}

// mpString reads one map key: its text when it is a string, and moves
// past it either way.
func (u *mpUpgrader) mpString() ([]byte, bool, error) {
	start := u.c.pos
	b := u.c.src[start]
	size, n, _, err := u.c.header()
	if err != nil {
		return nil, false, err
	}
	if n < 0 && (b >= 0xa0 && b <= 0xbf || b >= 0xd9 && b <= 0xdb) {
		s := u.c.src[u.c.pos : u.c.pos+size]
		u.c.pos += size
		return s, true, nil
	}
	u.c.pos = start
	return nil, false, u.skip()
}

// fieldIndex finds the field named name; fold matches as encoding/json
// does, case-insensitively.
func fieldIndex(se StructEvolution, name []byte, fold bool) int {
	for i, f := range se.Fields {
		if string(name) == f.Name {
			return i
		}
	}
	if fold {
		for i, f := range se.Fields {
			if bytes.EqualFold([]byte(f.Name), name) {
				return i
			}
		}
	}
	return -1
}

func renamedIndex(se StructEvolution, name []byte, fold bool) int {
	for i, f := range se.Fields {
		for _, old := range f.RenamedFrom {
			if string(name) == old || fold && bytes.EqualFold([]byte(old), name) {
				return i
			}
		}
	}
	return -1
}

func appendMsgpackStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, 0xd9, byte(n))
	case n < 1<<16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

type fieldKey struct {
	rt        reflect.Type
	tag, name string
}

// fieldTypes memoizes fieldType: a pure function of the type and name.
var fieldTypes sync.Map // fieldKey -> reflect.Type (nil when none)

// fieldType returns the type of rt's field whose tag (of the given key)
// names it name, or nil.
func fieldType(rt reflect.Type, name, tagKey string) reflect.Type {
	for rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt == nil || rt.Kind() != reflect.Struct {
		return nil
	}
	key := fieldKey{rt, tagKey, name}
	if ft, ok := fieldTypes.Load(key); ok {
		ft, _ := ft.(reflect.Type)
		return ft
	}
	ft := findFieldType(rt, name, tagKey)
	fieldTypes.Store(key, ft)
	return ft
}

func findFieldType(rt reflect.Type, name, tagKey string) reflect.Type {
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get(tagKey), ",")
		if tag == name {
			return f.Type
		}
	}
	return nil
}

type defaultKey struct {
	rt         reflect.Type
	name, json string
}

// defaults memoizes the MessagePack form of each default: a pure function
// of the struct type, the field and the default.
var defaults sync.Map // defaultKey -> []byte

var errNoField = errors.New("codec: evolution: no field for a default")

// msgpackDefault is the MessagePack form of a field's default: its JSON
// decoded into the field's Go type, then encoded as MsgPack encodes it.
func msgpackDefault(rt reflect.Type, name, def string) ([]byte, error) {
	key := defaultKey{rt, name, def}
	if b, ok := defaults.Load(key); ok {
		return b.([]byte), nil
	}
	ft := fieldType(rt, name, "msgpack")
	if ft == nil {
		return nil, errNoField
	}
	v := reflect.New(ft)
	if err := json.Unmarshal([]byte(def), v.Interface()); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.EncodeValue(v.Elem()); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if mayHoldMap(ft) {
		var err error
		if b, err = canonicalize(b); err != nil {
			return nil, err
		}
	}
	defaults.Store(key, b)
	return b, nil
}

// UpgradeJSON is UpgradeMsgPack for one JSON value. Member names match
// as encoding/json matches them: exactly, else case-insensitively, after
// unescaping.
func (e *Evolution) UpgradeJSON(data []byte, typ string) ([]byte, error) {
	if err := jsonDepth(data); err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, errors.New("codec: evolution: invalid JSON")
	}
	u := jsUpgrader{e: e, src: data, budget: newBudget(len(data))}
	out, err := u.value(make([]byte, 0, len(data)+16), typ, 0)
	if err != nil {
		return nil, err
	}
	if !u.changed {
		return data, nil
	}
	return out, nil
}

// jsUpgrader walks JSON that json.Valid accepted, once, writing as it
// reads; the checks already made keep the walk simple.
type jsUpgrader struct {
	e       *Evolution
	src     []byte
	pos     int
	changed bool
	budget
}

func (u *jsUpgrader) space() {
	for u.pos < len(u.src) {
		switch u.src[u.pos] {
		case ' ', '\t', '\n', '\r':
			u.pos++
		default:
			return
		}
	}
}

// skip moves past one value (after white space) and returns its bytes.
func (u *jsUpgrader) skip() []byte {
	u.space()
	start := u.pos
	depth := 0
	for u.pos < len(u.src) {
		c := u.src[u.pos]
		switch {
		case c == '"':
			u.str()
			if depth == 0 {
				return u.src[start:u.pos]
			}
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 { // the end of the container around a scalar
				return u.src[start:u.pos]
			}
			depth--
			if depth == 0 {
				u.pos++
				return u.src[start:u.pos]
			}
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return u.src[start:u.pos]
		}
		u.pos++
	}
	return u.src[start:u.pos]
}

// str moves past one string starting at pos.
func (u *jsUpgrader) str() {
	u.pos++ // the opening quote
	for u.pos < len(u.src) {
		switch u.src[u.pos] {
		case '\\':
			u.pos += 2
			continue
		case '"':
			u.pos++
			return
		}
		u.pos++
	}
}

// next skips white space and one separator (',' or ':') and returns the
// next byte.
func (u *jsUpgrader) next() byte {
	u.space()
	if u.pos < len(u.src) && (u.src[u.pos] == ',' || u.src[u.pos] == ':') {
		u.pos++
		u.space()
	}
	if u.pos < len(u.src) {
		return u.src[u.pos]
	}
	return 0
}

func (u *jsUpgrader) value(out []byte, shape string, depth int) ([]byte, error) {
	c := u.next()
	if shape == "" || c != '[' && c != '{' {
		return append(out, u.skip()...), nil
	}
	if depth >= MaxDepth { // not reached after jsonDepth; kept as a guard
		return nil, tooDeep()
	}
	elem, isList := strings.CutPrefix(shape, "[]")
	mapElem, isMap := strings.CutPrefix(shape, "map[string]")
	se, isStruct := u.e.Structs[shape]
	var err error
	switch {
	case isList && c == '[':
		u.pos++
		out = append(out, '[')
		for first := true; u.next() != ']'; first = false {
			if !first {
				out = append(out, ',')
			}
			if out, err = u.value(out, elem, depth+1); err != nil {
				return nil, err
			}
		}
		u.pos++
		return append(out, ']'), nil
	case isMap && c == '{':
		u.pos++
		out = append(out, '{')
		for first := true; u.next() != '}'; first = false {
			if !first {
				out = append(out, ',')
			}
			out = append(out, u.skip()...)
			out = append(out, ':')
			if out, err = u.value(out, mapElem, depth+1); err != nil {
				return nil, err
			}
		}
		u.pos++
		return append(out, '}'), nil
	case isStruct && c == '{':
		return u.structValue(out, se, depth)
	}
	return append(out, u.skip()...), nil // a value the decoder will refuse
}

// structValue is mpUpgrader.structValue for a JSON object.
func (u *jsUpgrader) structValue(out []byte, se StructEvolution, depth int) ([]byte, error) {
	u.pos++ // '{'
	out = append(out, '{')
	flags := make([]bool, 2*len(se.Fields))
	seen := flags[:len(se.Fields)]    // under any name: no default
	current := flags[len(se.Fields):] // under the current name: earlier names dropped
	n := 0
	sep := func() {
		if n > 0 {
			out = append(out, ',')
		}
		n++
	}
	var err error
	for u.next() != '}' {
		rawKey := u.skip()
		key := rawKey[1 : len(rawKey)-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if err := json.Unmarshal(rawKey, &k); err != nil {
				return nil, err
			}
			key = []byte(k)
		}
		i := fieldIndex(se, key, true)
		if i < 0 {
			if j := renamedIndex(se, key, true); j >= 0 {
				u.changed = true
				if current[j] {
					u.next()
					u.skip() // the current name came first
					continue
				}
				seen[j] = true
				sep()
				out = appendJSONString(out, se.Fields[j].Name)
				out = append(out, ':')
				if out, err = u.value(out, se.Fields[j].Type, depth+1); err != nil {
					return nil, err
				}
				continue
			}
		}
		sep()
		out = append(out, rawKey...)
		out = append(out, ':')
		if i < 0 {
			u.next()
			out = append(out, u.skip()...)
			continue
		}
		seen[i], current[i] = true, true
		if out, err = u.value(out, se.Fields[i].Type, depth+1); err != nil {
			return nil, err
		}
	}
	u.pos++ // '}'
	for i, f := range se.Fields {
		if !seen[i] && f.Default != "" {
			u.changed = true
			if err := u.spend(len(f.Name) + len(f.Default)); err != nil {
				return nil, err
			}
			sep()
			out = appendJSONString(out, f.Name)
			out = append(out, ':')
			out = append(out, f.Default...)
		}
	}
	return append(out, '}'), nil
}

func appendJSONString(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(out, b...)
}
