package schemaval

import (
	"time"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// The string encoding goes through runtime/codec's text codecs, the ones
// generated code uses, so that both accept and write the same text.

func (c *Codec) decodeText(data []byte) (any, error) {
	t := c.t
	var (
		v   any
		err error
	)
	switch t.Kind {
	case schema.KindString, schema.KindGoType:
		// A go_type's text is its own business; it is shown as is.
		return string(data), nil
	case schema.KindEnum:
		cur, ok := t.Def.Spelling(string(data)) // an earlier spelling reads as its value
		if !ok {
			return nil, decodeErr(nil, nil, "%s", notDeclared(t.Def, string(data)))
		}
		return cur, nil
	case schema.KindBool:
		v, err = codec.Bool[bool]{}.Decode(data)
	case schema.KindInt:
		v, err = widen(codec.Int[int]{}.Decode(data))
	case schema.KindInt8:
		v, err = widen(codec.Int[int8]{}.Decode(data))
	case schema.KindInt16:
		v, err = widen(codec.Int[int16]{}.Decode(data))
	case schema.KindInt32:
		v, err = widen(codec.Int[int32]{}.Decode(data))
	case schema.KindInt64:
		v, err = widen(codec.Int[int64]{}.Decode(data))
	case schema.KindUint:
		v, err = widenU(codec.Uint[uint]{}.Decode(data))
	case schema.KindUint8:
		v, err = widenU(codec.Uint[uint8]{}.Decode(data))
	case schema.KindUint16:
		v, err = widenU(codec.Uint[uint16]{}.Decode(data))
	case schema.KindUint32:
		v, err = widenU(codec.Uint[uint32]{}.Decode(data))
	case schema.KindUint64:
		v, err = widenU(codec.Uint[uint64]{}.Decode(data))
	case schema.KindFloat32:
		var f float32
		f, err = codec.Float[float32]{}.Decode(data)
		v = floatView(f, float64(f))
	case schema.KindFloat64:
		var f float64
		f, err = codec.Float[float64]{}.Decode(data)
		v = floatView(f, f)
	case schema.KindTime:
		var tm time.Time
		tm, err = codec.Time{}.Decode(data)
		v = tm.Format(time.RFC3339Nano)
	case schema.KindDuration:
		var d time.Duration
		d, err = codec.Duration{}.Decode(data)
		v = d.String()
	default:
		return nil, c.misfit(true)
	}
	if err != nil {
		return nil, decodeErr(nil, err, "%s does not decode as %s (string): %s", quoteShort(string(data)), t, causeText(unwrapCodec(err)))
	}
	return v, nil
}

func widen[I int | int8 | int16 | int32 | int64](n I, err error) (any, error) {
	return int64(n), err
}

func widenU[U uint | uint8 | uint16 | uint32 | uint64](n U, err error) (any, error) {
	return uint64(n), err
}

// encodeText writes a scalar checked by scalar() in the string encoding.
func (c *Codec) encodeText(v any) ([]byte, error) {
	t := c.t
	if t.Kind == schema.KindGoType {
		s, ok := v.(string)
		if !ok {
			return nil, encodeErr(nil, "want the text of %s, got %s", t, describeJSON(v))
		}
		return []byte(s), nil
	}
	if !fitsText(t.Kind) {
		return nil, c.misfit(false)
	}
	x, err := scalar(t, v, nil, false)
	if err != nil {
		return nil, err
	}
	var b []byte
	switch x := x.(type) {
	case string:
		b = []byte(x) // string and enum (checked)
	case bool:
		b, err = codec.Bool[bool]{}.Encode(x)
	case int64:
		b, err = codec.Int[int64]{}.Encode(x) // in range of the kind: scalar checked
	case uint64:
		b, err = codec.Uint[uint64]{}.Encode(x)
	case float32:
		b, err = codec.Float[float32]{}.Encode(x)
	case float64:
		b, err = codec.Float[float64]{}.Encode(x)
	case time.Time:
		b, err = codec.Time{}.Encode(x)
	case time.Duration:
		b, err = codec.Duration{}.Encode(x)
	}
	if err != nil {
		return nil, encodeErr(nil, "%s", causeText(unwrapCodec(err)))
	}
	return b, nil
}

func fitsText(k schema.Kind) bool {
	switch k {
	case schema.KindBytes, schema.KindList, schema.KindMap, schema.KindStruct:
		return false
	}
	return true
}
