package codec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// When a value fails to encode or decode, the codecs of msgpack and JSON
// say what failed but not where: "cannot encode conveyor.LineConfig: ""
// is not a declared value of enum LineState". locate finds where, on the
// error path only: it encodes (or decodes) the parts of the value one at a
// time, in the order the encoder writes them (or the data holds them), and
// descends into the first part that fails on its own, down to one that
// has no parts or encodes itself (an enum, a time, a go_type). The result
// is a path from the type's name through the wire names of struct fields,
// slice indexes and map keys: LineConfig.target_state,
// Recipe.steps[2].state, Line.zones["north"].mode.

// The walk is bounded, since decode errors come from data anyone may have
// stored: it descends at most maxPathDepth levels, and stops once it has
// re-decoded pathBudget times the data's size (every level re-reads at
// most the bytes of the level above, so a well-formed walk stays far below
// that). Past either bound the path found so far is reported.
const (
	maxPathDepth = 32
	pathBudget   = 8
)

// format is what locate needs of one encoding.
type format struct {
	tag string // the struct tag naming fields
	// encode and decode handle one part alone.
	encode func(v any) error
	decode func(data []byte, into any) error
	// splitMap returns the keys (as text) and raw values of a map, in the
	// data's order, and splitArray the raw elements of an array; ok is
	// false for data of another kind.
	splitMap   func(data []byte) (keys []string, vals [][]byte, ok bool)
	splitArray func(data []byte) (elems [][]byte, ok bool)
	// ownEncoding and ownDecoding report types that encode or decode
	// themselves: the walk does not look inside them.
	ownEncoding, ownDecoding []reflect.Type
	// leaf unwraps what the encoder adds around a part's own error.
	leaf func(error) error
}

var (
	msgpackFormat = &format{
		tag: "msgpack",
		encode: func(v any) error {
			return msgpack.NewEncoder(io.Discard).Encode(v)
		},
		decode:     msgpack.Unmarshal,
		splitMap:   msgpackMap,
		splitArray: msgpackArray,
		ownEncoding: []reflect.Type{
			reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.Marshaler](),
			reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.TextMarshaler](),
		},
		ownDecoding: []reflect.Type{
			reflect.TypeFor[msgpack.CustomDecoder](), reflect.TypeFor[msgpack.Unmarshaler](),
			reflect.TypeFor[encoding.BinaryUnmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
		},
		leaf: func(err error) error { return err },
	}
	jsonFormat = &format{
		tag: "json",
		encode: func(v any) error {
			_, err := json.Marshal(v)
			return err
		},
		decode:     json.Unmarshal,
		splitMap:   jsonObject,
		splitArray: jsonArray,
		ownEncoding: []reflect.Type{
			reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler](),
		},
		ownDecoding: []reflect.Type{
			reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
		},
		leaf: func(err error) error {
			// "json: error calling MarshalText for type conveyor.LineState: <err>"
			var me *json.MarshalerError
			if errors.As(err, &me) && me.Unwrap() != nil {
				return me.Unwrap()
			}
			return err
		},
	}
)

func implementsAny(t reflect.Type, ifaces []reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range ifaces {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return false
}

// rootName starts a path: the name of T without its package, or nothing
// for an unnamed type (the path then starts with "[" ).
func rootName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	return t.Name()
}

// locateEncode returns where encoding v fails, and that part's own error;
// "" when no single part fails alone.
func (f *format) locateEncode(v reflect.Value) (string, error) {
	w := &encodeWalk{f: f}
	path, err := w.walk(v, rootName(v.Type()), 0)
	if err == nil {
		return "", nil
	}
	return path, f.leaf(err)
}

type encodeWalk struct{ f *format }

// walk looks for the first part of v that fails alone. It returns the
// deepest such part's path and error, or a nil error when none does.
func (w *encodeWalk) walk(v reflect.Value, path string, depth int) (string, error) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", nil
		}
		v = v.Elem()
	}
	if depth >= maxPathDepth || implementsAny(v.Type(), w.f.ownEncoding) {
		return "", nil
	}
	try := func(part reflect.Value, sub string) (string, error, bool) {
		if !part.CanInterface() {
			return "", nil, false
		}
		err := w.f.encode(part.Interface())
		if err == nil {
			return "", nil, false
		}
		if deeper, derr := w.walk(part, sub, depth+1); derr != nil {
			return deeper, derr, true
		}
		return sub, err, true
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, fd := range structFields(v.Type(), w.f.tag) {
			fv, ok := fieldByIndex(v, fd.index)
			if !ok || fd.omitEmpty && fv.IsZero() {
				continue
			}
			if p, err, found := try(fv, path+"."+fd.name); found {
				return p, err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return "", nil // bytes
		}
		for i := range v.Len() {
			if p, err, found := try(v.Index(i), path+"["+strconv.Itoa(i)+"]"); found {
				return p, err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		rendered := make([]string, len(keys))
		for i, k := range keys {
			rendered[i] = renderKey(k)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		// The encoders sort map keys; follow the same order.
		sort.Slice(order, func(a, b int) bool { return rendered[order[a]] < rendered[order[b]] })
		for _, i := range order {
			if p, err, found := try(v.MapIndex(keys[i]), path+"["+rendered[i]+"]"); found {
				return p, err
			}
		}
	}
	return "", nil
}

// locateDecode returns where decoding data into a T fails, and that part's
// own error; "" when no single part fails alone.
func (f *format) locateDecode(t reflect.Type, data []byte) (string, error) {
	w := &decodeWalk{f: f, budget: pathBudget*len(data) + 4096}
	path, err := w.walk(t, data, rootName(t), 0)
	if err == nil {
		return "", nil
	}
	return path, f.leaf(err)
}

type decodeWalk struct {
	f      *format
	budget int // bytes left to re-decode
}

func (w *decodeWalk) walk(t reflect.Type, data []byte, path string, depth int) (string, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth >= maxPathDepth || implementsAny(t, w.f.ownDecoding) {
		return "", nil
	}
	try := func(pt reflect.Type, part []byte, sub string) (string, error, bool) {
		if w.budget < len(part) {
			return "", nil, false
		}
		w.budget -= len(part)
		err := w.f.decode(part, reflect.New(pt).Interface())
		if err == nil {
			return "", nil, false
		}
		if deeper, derr := w.walk(pt, part, sub, depth+1); derr != nil {
			return deeper, derr, true
		}
		return sub, err, true
	}
	switch t.Kind() {
	case reflect.Struct:
		keys, vals, ok := w.f.splitMap(data)
		if !ok {
			return "", nil
		}
		fields := structFields(t, w.f.tag)
		for i, k := range keys {
			fd, ok := fieldNamed(fields, k, w.f.tag == "json")
			if !ok {
				continue // unknown members are ignored
			}
			if p, err, found := try(t.FieldByIndex(fd.index).Type, vals[i], path+"."+fd.name); found {
				return p, err
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return "", nil
		}
		elems, ok := w.f.splitArray(data)
		if !ok {
			return "", nil
		}
		for i, e := range elems {
			if p, err, found := try(t.Elem(), e, path+"["+strconv.Itoa(i)+"]"); found {
				return p, err
			}
		}
	case reflect.Map:
		keys, vals, ok := w.f.splitMap(data)
		if !ok {
			return "", nil
		}
		for i, k := range keys {
			if t.Key().Kind() == reflect.String {
				k = strconv.Quote(k)
			}
			if p, err, found := try(t.Elem(), vals[i], path+"["+k+"]"); found {
				return p, err
			}
		}
	}
	return "", nil
}

// field is one encoded field of a struct.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

// structFields lists t's encoded fields in declaration order, as both
// libraries do: named by the tag (else the Go name), "-" left out,
// unexported fields left out, and untagged embedded structs inlined.
func structFields(t reflect.Type, tag string) []field {
	var out []field
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			name, opts, _ := strings.Cut(sf.Tag.Get(tag), ",")
			if name == "-" && opts == "" {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct && depth < maxPathDepth {
				walk(ft, idx, depth+1)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			out = append(out, field{name: name, index: idx, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	walk(t, nil, 0)
	return out
}

// fieldByIndex is v.FieldByIndex without the panic on a nil embedded
// pointer.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// fieldNamed finds the field a member name decodes into: by exact name,
// or for JSON also case-insensitively, as encoding/json matches.
func fieldNamed(fields []field, name string, foldCase bool) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	if foldCase {
		for _, f := range fields {
			if strings.EqualFold(f.name, name) {
				return f, true
			}
		}
	}
	return field{}, false
}

// renderKey writes a map key for a path: strings quoted, others as %v.
func renderKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return strconv.Quote(k.String())
	}
	if k.CanInterface() {
		return fmt.Sprint(k.Interface())
	}
	return "?"
}

// msgpackMap splits a MessagePack map into its keys and raw values.
func msgpackMap(data []byte) ([]string, [][]byte, bool) {
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, nil, false
	}
	keys := make([]string, 0, min(n, 64))
	vals := make([][]byte, 0, min(n, 64))
	for range n {
		k, err := dec.DecodeRaw()
		if err != nil {
			return nil, nil, false
		}
		v, err := dec.DecodeRaw()
		if err != nil {
			return nil, nil, false
		}
		var key any
		if msgpack.Unmarshal(k, &key) != nil {
			return nil, nil, false
		}
		s, isString := key.(string)
		if !isString {
			s = fmt.Sprint(key)
		}
		keys = append(keys, s)
		vals = append(vals, v)
	}
	return keys, vals, true
}

// msgpackArray splits a MessagePack array into its raw elements.
func msgpackArray(data []byte) ([][]byte, bool) {
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, false
	}
	elems := make([][]byte, 0, min(n, 64))
	for range n {
		e, err := dec.DecodeRaw()
		if err != nil {
			return nil, false
		}
		elems = append(elems, e)
	}
	return elems, true
}

// jsonObject splits a JSON object into its member names and raw values.
func jsonObject(data []byte) ([]string, [][]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	var keys []string
	var vals [][]byte
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		keys = append(keys, k)
		vals = append(vals, raw)
	}
	return keys, vals, true
}

// jsonArray splits a JSON array into its raw elements.
func jsonArray(data []byte) ([][]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	var elems [][]byte
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		elems = append(elems, raw)
	}
	return elems, true
}
