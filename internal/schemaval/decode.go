package schemaval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// Decode reads stored bytes as the generated code's codec reads them and
// returns the value in a JSON-able form:
//
//	bool                         bool
//	integers                     int64 or uint64
//	float32, float64             float32 or float64; "NaN", "+Inf", "-Inf" as strings
//	string, enum                 string
//	bytes                        []byte (base64 in JSON)
//	time                         string, RFC 3339 with nanoseconds
//	duration                     string, Go notation ("1m30s")
//	list                         []any, nil when absent
//	map                          map[string]any, nil when absent
//	struct                       Object
//	go_type                      json.RawMessage (JSON), string (text), or
//	                             what the MessagePack bytes hold
//
// json.Marshal writes any of them. Bytes the generated codec refuses give
// an *Error that matches codec.ErrDecode.
func (c *Codec) Decode(data []byte) (any, error) {
	switch c.enc {
	case schema.EncodingBytes:
		if c.t.Kind != schema.KindBytes {
			return nil, c.misfit(true)
		}
		return append([]byte{}, data...), nil
	case schema.EncodingString:
		return c.decodeText(data)
	case schema.EncodingJSON, schema.EncodingMsgpack:
	default:
		return nil, decodeErr(nil, nil, "unknown encoding %q", c.enc)
	}
	if def := c.versionedDef(); def != nil {
		return c.decodeVersioned(def, data)
	}
	c.init()
	if c.rt == nil {
		return nil, c.misfit(true)
	}
	// The generated codec first checks that the bytes are one value,
	// nested at most codec.MaxDepth deep; decoding into a RawMessage
	// through it runs that check alone.
	if err := c.wellFormed(data); err != nil {
		return nil, err
	}
	up, upErr := c.upgrade(data)
	if errors.Is(upErr, codec.ErrUpgradeLimit) {
		return nil, decodeErr(nil, upErr, "does not decode as %s (%s): %s", c.t, c.enc, causeText(upErr))
	}
	if upErr == nil {
		data = up
	}
	ptr := reflect.New(c.rt)
	if err := c.decodeMirror(data, ptr); err != nil {
		return nil, err
	}
	if upErr != nil {
		// Bytes that decode without the upgrade they need are still
		// refused, as the generated codec.Evolved refuses them.
		return nil, decodeErr(nil, upErr, "does not decode as %s (%s): %s", c.t, c.enc, causeText(upErr))
	}
	return c.view(c.t, ptr.Elem(), nil)
}

func (c *Codec) decodeMirror(data []byte, ptr reflect.Value) error {
	if c.enc == schema.EncodingJSON {
		if err := json.Unmarshal(data, ptr.Interface()); err != nil {
			return decodeErr(nil, err, "does not decode as %s (json): %s", c.t, causeText(err))
		}
		return nil
	}
	dec := msgpack.GetDecoder()
	dec.Reset(bytes.NewReader(data))
	err := dec.Decode(ptr.Interface())
	msgpack.PutDecoder(dec)
	if err != nil {
		return decodeErr(nil, err, "does not decode as %s (msgpack): %s", c.t, causeText(err))
	}
	return nil
}

// wellFormed checks data as the generated codec does before it decodes:
// one value of the encoding, nested at most codec.MaxDepth deep (errors
// match codec.ErrTooDeep).
func (c *Codec) wellFormed(data []byte) error {
	var err error
	if c.enc == schema.EncodingJSON {
		_, err = (codec.JSON[json.RawMessage]{}).Decode(data)
	} else {
		_, err = (codec.MsgPack[msgpack.RawMessage]{}).Decode(data)
	}
	if err != nil {
		return decodeErr(nil, err, "does not decode as %s (%s): %s", c.t, c.enc, causeText(unwrapCodec(err)))
	}
	return nil
}

// unwrapCodec returns the cause inside a *codec.DecodeError.
func unwrapCodec(err error) error {
	var de *codec.DecodeError
	if errors.As(err, &de) && de.Err != nil {
		return de.Err
	}
	return err
}

// misfit reports a type the encoding cannot hold (schema.Load refuses it).
func (c *Codec) misfit(decoding bool) error {
	msg := fmt.Sprintf("the %s encoding cannot hold type %s", c.enc, c.t)
	if decoding {
		return decodeErr(nil, nil, "%s", msg)
	}
	return encodeErr(nil, "%s", msg)
}

// view turns a decoded mirror value into its JSON-able form, checking
// enum values on the way.
func (c *Codec) view(t *schema.Type, v reflect.Value, p *path) (any, error) {
	switch t.Kind {
	case schema.KindBool:
		return v.Bool(), nil
	case schema.KindFloat32:
		return floatView(float32(v.Float()), v.Float()), nil
	case schema.KindFloat64:
		return floatView(v.Float(), v.Float()), nil
	case schema.KindString:
		return v.String(), nil
	case schema.KindBytes:
		return v.Bytes(), nil
	case schema.KindTime:
		tm := v.Interface().(time.Time)
		if c.enc == schema.EncodingMsgpack {
			tm = tm.UTC()
		}
		return tm.Format(time.RFC3339Nano), nil
	case schema.KindDuration:
		return time.Duration(v.Int()).String(), nil
	case schema.KindEnum:
		s := v.String()
		// Empty is what a nil, a null or an absent field leaves: the
		// generated code reads that as the zero value without complaint.
		if s == "" {
			return s, nil
		}
		cur, ok := t.Def.Spelling(s) // an earlier spelling reads as its value
		if !ok {
			return nil, decodeErr(p, nil, "%s", notDeclared(t.Def, s))
		}
		return cur, nil
	case schema.KindList:
		if v.IsNil() {
			return []any(nil), nil
		}
		out := make([]any, v.Len())
		for i := range out {
			e, err := c.view(t.Elem, v.Index(i), p.indexOf(i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case schema.KindMap:
		if v.IsNil() {
			return map[string]any(nil), nil
		}
		out := make(map[string]any, v.Len())
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys) // the first bad entry reported is the same every time
		for _, k := range keys {
			e, err := c.view(t.Elem, v.MapIndex(reflect.ValueOf(k)), p.keyOf(k))
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case schema.KindStruct:
		return c.structView(t.Def, v, p)
	case schema.KindGoType:
		if c.enc == schema.EncodingJSON {
			return json.RawMessage(slices.Clone(v.Bytes())), nil
		}
		return genericView(v.Interface()), nil
	}
	if t.Kind.IsSigned() {
		return v.Int(), nil
	}
	if t.Kind.IsInteger() {
		return v.Uint(), nil
	}
	return nil, decodeErr(p, nil, "unknown type %s", t)
}

func (c *Codec) structView(def *schema.TypeDef, v reflect.Value, p *path) (any, error) {
	out := make(Object, 0, len(def.Fields))
	for i, f := range def.Fields {
		fv := v.Field(i)
		if f.Optional && isEmptyValue(fv) {
			continue // encoding/json's omitempty would leave it out
		}
		if fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		e, err := c.view(f.Type, fv, p.fieldOf(f.Name))
		if err != nil {
			return nil, err
		}
		out = append(out, Member{Name: f.Name, Value: e})
	}
	return out, nil
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// floatView keeps a finite float as a number and names the others, which
// JSON cannot hold.
func floatView[F float32 | float64](f F, f64 float64) any {
	switch {
	case math.IsNaN(f64):
		return "NaN"
	case math.IsInf(f64, 1):
		return "+Inf"
	case math.IsInf(f64, -1):
		return "-Inf"
	}
	return f
}

// genericView turns what the msgpack library decodes into an interface
// (a go_type's MessagePack form) into the same JSON-able kinds.
func genericView(v any) any {
	switch v := v.(type) {
	case nil, bool, string, []byte:
		return v
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case int64:
		return v
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case uint32:
		return uint64(v)
	case uint64:
		return v
	case float32:
		return floatView(v, float64(v))
	case float64:
		return floatView(v, v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = genericView(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = genericView(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[fmt.Sprint(k)] = genericView(e)
		}
		return out
	}
	return fmt.Sprint(v)
}

func declared(def *schema.TypeDef, s string) bool {
	for _, ev := range def.Values {
		if ev.Value == s {
			return true
		}
	}
	return false
}

func notDeclared(def *schema.TypeDef, s string) string {
	vals := make([]string, len(def.Values))
	for i, ev := range def.Values {
		vals[i] = ev.Value
	}
	return fmt.Sprintf("%s is not a %s (want one of %s)", quoteShort(s), def.Name, quoteList(vals))
}
