package schemaval

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/internal/suggest"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// Encode checks v against the declared type and returns the bytes the
// generated code stores for it. v is what ParseJSON or ParseInput returns
// (numbers as json.Number; float64 and the Go integer types are taken too).
// A struct is an object with every required field and no unknown one (an
// optional field may be absent or null), an enum one of its declared
// values, an integer a decimal in the type's range, a float a number or
// "NaN", "+Inf", "-Inf" (not in JSON, which cannot hold them), bytes a
// base64 string, a time an RFC 3339 string, a duration a Go duration
// string or a number of nanoseconds, a list an array and a map an object
// (a required list, map or bytes field may also be null or left out: it
// is then written as the generated code writes a nil one). A misfit is an *Error naming its path, matching
// codec.ErrEncode.
func (c *Codec) Encode(v any) ([]byte, error) {
	switch c.enc {
	case schema.EncodingBytes:
		if c.t.Kind != schema.KindBytes {
			return nil, c.misfit(false)
		}
		x, err := scalar(c.t, v, nil, false)
		if err != nil {
			return nil, err
		}
		if x.([]byte) == nil {
			return []byte{}, nil
		}
		return x.([]byte), nil
	case schema.EncodingString:
		return c.encodeText(v)
	case schema.EncodingJSON, schema.EncodingMsgpack:
	default:
		return nil, encodeErr(nil, "unknown encoding %q", c.enc)
	}
	if def := c.versionedDef(); def != nil {
		return c.encodeVersioned(def, v)
	}
	c.init()
	if c.rt == nil {
		return nil, c.misfit(false)
	}
	rv, err := c.build(c.t, c.rt, v, nil)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch {
	case c.enc == schema.EncodingJSON:
		out, err = json.Marshal(rv.Interface())
	case c.canonical:
		// What codec.MsgPack does for a type that may hold a map: encode,
		// then rewrite every map into canonical order.
		out, err = codec.MsgPack[any]{}.Encode(rv.Interface())
	default:
		// What codec.MsgPack does for the other types.
		var buf bytes.Buffer
		enc := msgpack.GetEncoder()
		enc.Reset(&buf)
		enc.SetSortMapKeys(true)
		err = enc.Encode(rv.Interface())
		msgpack.PutEncoder(enc)
		out = buf.Bytes()
	}
	if err != nil {
		return nil, encodeErr(nil, "%s", causeText(unwrapEncode(err)))
	}
	return out, nil
}

func unwrapEncode(err error) error {
	var ee *codec.EncodeError
	if errors.As(err, &ee) && ee.Err != nil {
		return ee.Err
	}
	return err
}

// EncodeJSON is ParseJSON followed by Encode.
func (c *Codec) EncodeJSON(data []byte) ([]byte, error) {
	v, err := ParseJSON(data)
	if err != nil {
		return nil, err
	}
	return c.Encode(v)
}

// build makes the mirror value (of Go type rt) of v, checked against t.
func (c *Codec) build(t *schema.Type, rt reflect.Type, v any, p *path) (reflect.Value, error) {
	if rt == tooDeepType {
		return reflect.Value{}, encodeErr(p, "%v", errTooDeep)
	}
	out := reflect.New(rt).Elem()
	switch t.Kind {
	case schema.KindList:
		if v == nil {
			return out, nil
		}
		l, ok := v.([]any)
		if !ok {
			return out, encodeErr(p, "want a list (JSON array) of %s, got %s", t.Elem, describeJSON(v))
		}
		out = reflect.MakeSlice(rt, len(l), len(l))
		for i, e := range l {
			ev, err := c.build(t.Elem, rt.Elem(), e, p.indexOf(i))
			if err != nil {
				return out, err
			}
			out.Index(i).Set(ev)
		}
		return out, nil
	case schema.KindMap:
		if v == nil {
			return out, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return out, encodeErr(p, "want a map (JSON object) of %s, got %s", t.Elem, describeJSON(v))
		}
		out = reflect.MakeMapWithSize(rt, len(m))
		for _, k := range sortedKeys(m) {
			ev, err := c.build(t.Elem, rt.Elem(), m[k], p.keyOf(k))
			if err != nil {
				return out, err
			}
			out.SetMapIndex(reflect.ValueOf(k), ev)
		}
		return out, nil
	case schema.KindStruct:
		return c.buildStruct(t.Def, rt, v, p)
	case schema.KindGoType:
		if c.enc != schema.EncodingJSON {
			return out, encodeErr(p, "%s is a go_type whose MessagePack form only its Go type %s can write", t, t.Def.GoType)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return out, encodeErr(p, "%s", causeText(err))
		}
		out.SetBytes(b)
		return out, nil
	}
	x, err := scalar(t, v, p, c.enc == schema.EncodingJSON)
	if err != nil {
		return out, err
	}
	switch x := x.(type) {
	case string:
		out.SetString(x)
	case bool:
		out.SetBool(x)
	case int64:
		out.SetInt(x)
	case uint64:
		out.SetUint(x)
	case float32:
		out.SetFloat(float64(x))
	case float64:
		out.SetFloat(x)
	case []byte:
		out.SetBytes(x)
	case time.Time:
		out.Set(reflect.ValueOf(x))
	case time.Duration:
		out.SetInt(int64(x))
	}
	return out, nil
}

func (c *Codec) buildStruct(def *schema.TypeDef, rt reflect.Type, v any, p *path) (reflect.Value, error) {
	out := reflect.New(rt).Elem()
	m, ok := v.(map[string]any)
	if !ok {
		return out, encodeErr(p, "want a %s (JSON object), got %s", def.Name, describeJSON(v))
	}
	var unknown []string
	for name := range m {
		if fieldNamed(def, name) == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return out, encodeErr(p.fieldOf(unknown[0]), "%s has no such field%s (its fields: %s)", def.Name, suggest.DidYouMean(unknown[0], fieldNames(def)), strings.Join(fieldNames(def), ", "))
	}
	var missing []string
	for i, f := range def.Fields {
		fv, present := m[f.Name]
		if !present || fv == nil && f.Optional {
			// A required slice or map may be left out (or null): generated
			// code writes one never set as nil.
			if !f.Optional && !f.Type.Kind.GoNilable() {
				missing = append(missing, f.Name)
			}
			continue
		}
		ft := rt.Field(i).Type
		if f.GoPointer() {
			ev, err := c.build(f.Type, ft.Elem(), fv, p.fieldOf(f.Name))
			if err != nil {
				return out, err
			}
			ptr := reflect.New(ft.Elem())
			ptr.Elem().Set(ev)
			out.Field(i).Set(ptr)
			continue
		}
		ev, err := c.build(f.Type, ft, fv, p.fieldOf(f.Name))
		if err != nil {
			return out, err
		}
		out.Field(i).Set(ev)
	}
	if len(missing) == 1 {
		return out, encodeErr(p, "%s: required field %q is missing", def.Name, missing[0])
	}
	if len(missing) > 1 {
		return out, encodeErr(p, "%s: required fields %s are missing", def.Name, quoteList(missing))
	}
	return out, nil
}

func fieldNamed(def *schema.TypeDef, name string) *schema.Field {
	for _, f := range def.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func fieldNames(def *schema.TypeDef) []string {
	out := make([]string, len(def.Fields))
	for i, f := range def.Fields {
		out[i] = f.Name
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// scalar checks a JSON value against a scalar type and returns it as the
// Go value to store: string (string, enum), bool, int64, uint64 (in the
// kind's range), float32, float64, []byte, time.Time or time.Duration.
// inJSON refuses floats JSON cannot hold.
func scalar(t *schema.Type, v any, p *path, inJSON bool) (any, error) {
	want := func(what string) error {
		return encodeErr(p, "want %s, got %s", what, describeJSON(v))
	}
	switch t.Kind {
	case schema.KindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, want("true or false")
	case schema.KindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, want("a string")
	case schema.KindEnum:
		s, ok := v.(string)
		if !ok {
			return nil, want("a " + t.Def.Name + " (a string: " + enumList(t.Def) + ")")
		}
		cur, ok := t.Def.Spelling(s) // as the generated UnmarshalText reads an earlier spelling
		if !ok {
			return nil, encodeErr(p, "%s%s", notDeclared(t.Def, s), suggest.DidYouMean(s, enumValues(t.Def)))
		}
		return cur, nil
	case schema.KindBytes:
		if v == nil {
			return []byte(nil), nil // how JSON writes a nil []byte
		}
		s, ok := v.(string)
		if !ok {
			return nil, want("bytes as a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, encodeErr(p, "want bytes as a base64 string: %v", err)
		}
		return b, nil
	case schema.KindTime:
		s, ok := v.(string)
		if !ok {
			return nil, want("a time (an RFC 3339 string)")
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, encodeErr(p, "%s is not an RFC 3339 time like 2026-01-02T15:04:05Z", quoteShort(s))
		}
		return tm, nil
	case schema.KindDuration:
		switch x := v.(type) {
		case string:
			d, err := time.ParseDuration(x)
			if err != nil {
				return nil, encodeErr(p, "%s is not a Go duration like 1m30s or 250ms", quoteShort(x))
			}
			return d, nil
		case json.Number, float64, int, int64:
			n, err := integer(x, 64)
			if err != nil {
				return nil, encodeErr(p, "want a duration (a string like 1m30s, or integer nanoseconds), got %s", describeJSON(v))
			}
			return time.Duration(n), nil
		}
		return nil, want("a duration (a string like 1m30s, or integer nanoseconds)")
	case schema.KindFloat32, schema.KindFloat64:
		bits := 64
		if t.Kind == schema.KindFloat32 {
			bits = 32
		}
		f, ok, inRange := float(v, bits)
		switch {
		case !ok:
			return nil, want("a " + t.String() + ` (a number, or "NaN", "+Inf", "-Inf")`)
		case !inRange:
			return nil, encodeErr(p, "%s is out of range for %s", describeJSON(v), t)
		}
		if inJSON && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, encodeErr(p, "%s cannot be stored in JSON", describeJSON(v))
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	}
	if t.Kind.IsInteger() {
		bits := intBits(t.Kind)
		if t.Kind.IsSigned() {
			n, err := integer(v, bits)
			if err != nil {
				return nil, encodeErr(p, "want a %s (%d..%d), got %s", t, int64(-1)<<(bits-1), int64(1)<<(bits-1)-1, describeJSON(v))
			}
			return n, nil
		}
		n, err := unsigned(v, bits)
		if err != nil {
			return nil, encodeErr(p, "want a %s (0..%d), got %s", t, uint64(1)<<(bits-1)<<1-1, describeJSON(v))
		}
		return n, nil
	}
	return nil, encodeErr(p, "type %s is not a scalar", t)
}

// intBits is the width of an integer kind (int and uint are 64 bits
// wide on every platform ssgen builds for).
func intBits(k schema.Kind) int {
	switch k {
	case schema.KindInt8, schema.KindUint8:
		return 8
	case schema.KindInt16, schema.KindUint16:
		return 16
	case schema.KindInt32, schema.KindUint32:
		return 32
	}
	return strconv.IntSize
}

// integer reads a whole decimal number in a bits-wide signed range.
func integer(v any, bits int) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseInt(string(x), 10, bits)
	case int:
		return strconv.ParseInt(strconv.Itoa(x), 10, bits)
	case int64:
		return strconv.ParseInt(strconv.FormatInt(x, 10), 10, bits)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.ParseInt(strconv.FormatInt(int64(x), 10), 10, bits)
		}
	}
	return 0, strconv.ErrSyntax
}

func unsigned(v any, bits int) (uint64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseUint(string(x), 10, bits)
	case int:
		return strconv.ParseUint(strconv.Itoa(x), 10, bits)
	case int64:
		return strconv.ParseUint(strconv.FormatInt(x, 10), 10, bits)
	case uint64:
		return strconv.ParseUint(strconv.FormatUint(x, 10), 10, bits)
	case float64:
		if x == math.Trunc(x) && x >= 0 && x < 1<<53 {
			return strconv.ParseUint(strconv.FormatInt(int64(x), 10), 10, bits)
		}
	}
	return 0, strconv.ErrSyntax
}

// float reads a number, or one of the names of the floats JSON cannot
// hold. inRange is false for a finite number too large for a bits-wide
// float.
func float(v any, bits int) (f float64, ok, inRange bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), bits)
		if err != nil {
			_, err64 := strconv.ParseFloat(string(x), 64)
			return 0, err64 == nil || errors.Is(err64, strconv.ErrRange), false
		}
		return f, true, true
	case float64:
		if bits == 32 && !math.IsInf(x, 0) && math.Abs(x) > math.MaxFloat32 {
			return 0, true, false
		}
		return x, true, true
	case string:
		switch x {
		case "NaN":
			return math.NaN(), true, true
		case "+Inf", "Inf":
			return math.Inf(1), true, true
		case "-Inf":
			return math.Inf(-1), true, true
		}
	}
	return 0, false, false
}

// describeJSON names a JSON value for a message: its kind and, for a
// short scalar, the value.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case string:
		return "the string " + quoteShort(x)
	case json.Number:
		return "the number " + quoteNumber(string(x))
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case int, int64, uint64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value of Go type " + reflect.TypeOf(v).String()
}

func quoteNumber(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func enumValues(def *schema.TypeDef) []string {
	out := make([]string, len(def.Values))
	for i, ev := range def.Values {
		out[i] = ev.Value
	}
	return out
}

func enumList(def *schema.TypeDef) string { return quoteList(enumValues(def)) }
