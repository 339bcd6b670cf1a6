package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	// are present, the first in stored order wins.
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
// fails on them.
func (c Evolved[T]) Decode(data []byte) (T, error) {
	up, err := c.upgrade(data)
	if err != nil {
		return c.Codec.Decode(data)
	}
	return c.Codec.Decode(up)
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
	u := mpUpgrader{e: e, c: canonicalizer{src: data}}
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
	if depth > maxCanonicalDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", errMsgpackSyntax, maxCanonicalDepth)
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

type mpEntry struct {
	k0, v0, v1 int // key start, value start, value end in src
	name       string
	isStr      bool
}

func (u *mpUpgrader) structValue(out []byte, se StructEvolution, rt reflect.Type, count, depth int) ([]byte, error) {
	for rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	ents := make([]mpEntry, count)
	for i := range ents {
		e := &ents[i]
		e.k0 = u.c.pos
		b := u.c.src[u.c.pos]
		size, n, _, err := u.c.header()
		if err != nil {
			return nil, err
		}
		if n < 0 && (b >= 0xa0 && b <= 0xbf || b >= 0xd9 && b <= 0xdb) {
			e.name, e.isStr = string(u.c.src[u.c.pos:u.c.pos+size]), true
		}
		u.c.pos = e.k0
		if err := u.skip(); err != nil {
			return nil, err
		}
		e.v0 = u.c.pos
		if err := u.skip(); err != nil {
			return nil, err
		}
		e.v1 = u.c.pos
	}
	end := u.c.pos
	present := make([]bool, len(se.Fields))
	for _, e := range ents {
		if i := fieldIndex(se, e.name, false); e.isStr && i >= 0 {
			present[i] = true
		}
	}
	var body []byte
	n := 0
	var err error
	for _, e := range ents {
		if !e.isStr {
			body = append(body, u.c.src[e.k0:e.v1]...)
			n++
			continue
		}
		i := fieldIndex(se, e.name, false)
		if i < 0 {
			j := renamedIndex(se, e.name, false)
			if j < 0 { // a field the type does not know (removed): kept, ignored by the decoder
				body = append(body, u.c.src[e.k0:e.v1]...)
				n++
				continue
			}
			u.changed = true
			if present[j] {
				continue // the current name wins
			}
			present[j] = true
			body = appendMsgpackStr(body, se.Fields[j].Name)
			i = j
		} else {
			body = append(body, u.c.src[e.k0:e.v0]...)
		}
		n++
		u.c.pos = e.v0
		if body, err = u.value(body, se.Fields[i].Type, fieldType(rt, se.Fields[i].Name, "msgpack"), depth+1); err != nil {
			return nil, err
		}
	}
	for i, f := range se.Fields {
		if present[i] || f.Default == "" {
			continue
		}
		def, err := msgpackDefault(rt, f.Name, f.Default)
		if err != nil {
			return nil, err
		}
		u.changed = true
		body = appendMsgpackStr(body, f.Name)
		body = append(body, def...)
		n++
	}
	u.c.pos = end
	out = appendMsgpackMapHeader(out, n)
	return append(out, body...), nil
}

// fieldIndex finds the field named name; fold matches as encoding/json
// does, case-insensitively.
func fieldIndex(se StructEvolution, name string, fold bool) int {
	for i, f := range se.Fields {
		if f.Name == name {
			return i
		}
	}
	if fold {
		for i, f := range se.Fields {
			if strings.EqualFold(f.Name, name) {
				return i
			}
		}
	}
	return -1
}

func renamedIndex(se StructEvolution, name string, fold bool) int {
	for i, f := range se.Fields {
		for _, old := range f.RenamedFrom {
			if old == name || fold && strings.EqualFold(old, name) {
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

func appendMsgpackMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n < 1<<16:
		return append(b, 0xde, byte(n>>8), byte(n))
	}
	return append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// fieldType returns the type of rt's field whose tag (of the given key)
// names it name, or nil.
func fieldType(rt reflect.Type, name, tagKey string) reflect.Type {
	for rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt == nil || rt.Kind() != reflect.Struct {
		return nil
	}
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
// as encoding/json matches them: exactly, else case-insensitively.
func (e *Evolution) UpgradeJSON(data []byte, typ string) ([]byte, error) {
	if !json.Valid(data) {
		return nil, errors.New("codec: evolution: invalid JSON")
	}
	u := jsUpgrader{e: e}
	out, err := u.value(bytes.TrimSpace(data), typ, 0)
	if err != nil {
		return nil, err
	}
	if !u.changed {
		return data, nil
	}
	return out, nil
}

type jsUpgrader struct {
	e       *Evolution
	changed bool
}

// maxJSONDepth matches encoding/json's own nesting limit.
const maxJSONDepth = 10000

func (u *jsUpgrader) value(raw []byte, shape string, depth int) ([]byte, error) {
	if shape == "" || len(raw) == 0 {
		return raw, nil
	}
	if depth > maxJSONDepth {
		return nil, errors.New("codec: evolution: JSON nested too deep")
	}
	elem, isList := strings.CutPrefix(shape, "[]")
	mapElem, isMap := strings.CutPrefix(shape, "map[string]")
	switch {
	case isList && raw[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, it := range items {
			if i > 0 {
				out = append(out, ',')
			}
			v, err := u.value(it, elem, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
		}
		return append(out, ']'), nil
	case isMap && raw[0] == '{':
		members, err := jsonMembers(raw)
		if err != nil {
			return nil, err
		}
		out := []byte{'{'}
		for i, m := range members {
			if i > 0 {
				out = append(out, ',')
			}
			v, err := u.value(m.val, mapElem, depth+1)
			if err != nil {
				return nil, err
			}
			out = appendJSONMember(out, m.key, v)
		}
		return append(out, '}'), nil
	case !isList && !isMap && raw[0] == '{':
		se, ok := u.e.Structs[shape]
		if !ok {
			return raw, nil
		}
		return u.structValue(raw, se, depth)
	}
	return raw, nil // null, or a value the decoder will refuse
}

type jsonMember struct {
	key string
	val json.RawMessage
}

func jsonMembers(raw []byte) ([]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var out []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, jsonMember{key, v})
	}
	return out, nil
}

func appendJSONMember(out []byte, key string, val []byte) []byte {
	k, _ := json.Marshal(key) // a string always marshals
	out = append(out, k...)
	out = append(out, ':')
	return append(out, val...)
}

func (u *jsUpgrader) structValue(raw []byte, se StructEvolution, depth int) ([]byte, error) {
	members, err := jsonMembers(raw)
	if err != nil {
		return nil, err
	}
	present := make([]bool, len(se.Fields))
	for _, m := range members {
		if i := fieldIndex(se, m.key, true); i >= 0 {
			present[i] = true
		}
	}
	out := []byte{'{'}
	n := 0
	add := func(key string, val []byte) {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = appendJSONMember(out, key, val)
	}
	for _, m := range members {
		key := m.key
		i := fieldIndex(se, m.key, true)
		if i < 0 {
			j := renamedIndex(se, m.key, true)
			if j < 0 {
				add(m.key, m.val)
				continue
			}
			u.changed = true
			if present[j] {
				continue
			}
			present[j] = true
			i, key = j, se.Fields[j].Name
		}
		v, err := u.value(m.val, se.Fields[i].Type, depth+1)
		if err != nil {
			return nil, err
		}
		add(key, v)
	}
	for i, f := range se.Fields {
		if !present[i] && f.Default != "" {
			u.changed = true
			add(f.Name, []byte(f.Default))
		}
	}
	return append(out, '}'), nil
}
