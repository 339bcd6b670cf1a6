package codec

import (
	"bytes"
	"encoding"
	"errors"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MsgPack encodes T as MessagePack with github.com/vmihailenco/msgpack/v5,
// reading `msgpack` struct tags (falling back to nothing else). Struct
// fields keep their declaration order in types that cannot hold a map.
//
// The library sorts map keys only for map[string]string, map[string]bool and
// map[string]any; every other map type it writes in Go's random iteration
// order. So that equal values always give equal bytes, MsgPack rewrites the
// output of types that can contain maps so that every map's entries appear in
// ascending order of their encoded key bytes (the rule of CBOR's core
// deterministic encoding). The pass cannot tell a struct from a map on the
// wire, so in such types the fields of structs are sorted by their encoded
// names too. Types without maps skip that pass.
//
// Decode refuses stored bytes nesting more than MaxDepth arrays and maps
// (ErrTooDeep) before the library, which recurses once per level, sees
// them.
type MsgPack[T any] struct{}

// ContentType returns ContentTypeMsgPack.
func (MsgPack[T]) ContentType() string { return ContentTypeMsgPack }

// Encode returns the deterministic MessagePack form of v.
func (MsgPack[T]) Encode(v T) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	enc.Reset(&buf)
	enc.SetSortMapKeys(true)
	err := enc.Encode(v)
	msgpack.PutEncoder(enc)
	if err != nil {
		return nil, encodeErrAt(msgpackFormat, v, err)
	}
	out := buf.Bytes()
	if !mayHoldMap(reflect.TypeFor[T]()) {
		return out, nil
	}
	out, err = canonicalize(out)
	if err != nil {
		return nil, encodeErr[T]("msgpack", err)
	}
	return out, nil
}

// errTrailing reports bytes left over after one complete value.
var errTrailing = errors.New("trailing data after value")

// Decode parses one MessagePack value; trailing bytes are an error, so that
// two different stored byte strings never decode to the same value by
// accident of truncation. Unknown struct fields are ignored, which lets a
// newer writer add fields without breaking older readers.
func (MsgPack[T]) Decode(data []byte) (T, error) {
	var v T
	if err := wellFormed(data); err != nil {
		return v, decodeErr[T]("msgpack", err)
	}
	r := bytes.NewReader(data)
	dec := msgpack.GetDecoder()
	// A *bytes.Reader is an io.ByteScanner, so the decoder reads from it
	// directly and r.Len() tells exactly what it left.
	dec.Reset(r)
	err := dec.Decode(&v)
	msgpack.PutDecoder(dec)
	if err == nil && r.Len() != 0 {
		err = errTrailing // not reached after wellFormed; kept as a guard
	}
	if err != nil {
		var zero T
		return zero, decodeErrAt[T](msgpackFormat, data, err)
	}
	return v, nil
}

var (
	customEncoderType = reflect.TypeFor[msgpack.CustomEncoder]()
	marshalerType     = reflect.TypeFor[msgpack.Marshaler]()
	binaryMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshaler     = reflect.TypeFor[encoding.TextMarshaler]()

	mapTypes sync.Map // reflect.Type -> bool
)

// mayHoldMap reports whether encoding a value of type t can write a msgpack
// map whose order the library does not fix. It errs on the side of true:
// interfaces and types with their own msgpack encoders may write anything.
func mayHoldMap(t reflect.Type) bool {
	if v, ok := mapTypes.Load(t); ok {
		return v.(bool)
	}
	r := walkForMaps(t, map[reflect.Type]bool{})
	mapTypes.Store(t, r)
	return r
}

func walkForMaps(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: its other branches decide
	}
	seen[t] = true
	pt := reflect.PointerTo(t)
	switch {
	case t.Implements(customEncoderType), t.Implements(marshalerType),
		pt.Implements(customEncoderType), pt.Implements(marshalerType):
		return true
	case t.Implements(binaryMarshaler), t.Implements(textMarshaler),
		pt.Implements(binaryMarshaler), pt.Implements(textMarshaler):
		return false // written as opaque bin/str
	}
	switch t.Kind() {
	case reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return walkForMaps(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if walkForMaps(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
