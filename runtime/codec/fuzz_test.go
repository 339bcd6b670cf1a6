package codec_test

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/codec"
)

func msgpackSeeds(f *testing.F) {
	seeds := []any{
		setPoint{Celsius: 21.5, Mode: "heat", Labels: map[string]int{"a": 1, "b": 2}},
		map[int]string{1: "x", 2: "y"},
		[]any{nil, true, 1.5, "s", []byte{1}, map[string]any{"k": []int{1, 2}}},
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
	}
	for _, s := range seeds {
		b, err := codec.MsgPack[any]{}.Encode(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}) // a map claiming 4G entries
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // an array claiming 4G elements
	f.Add([]byte{0xc1})
	// Nesting past MaxDepth (issue #27): refused with ErrTooDeep.
	f.Add(append(bytes.Repeat([]byte{0x91}, codec.MaxDepth), 0x90))
	f.Add(deepMsgPack(codec.MaxDepth, "kids"))
}

// FuzzMsgPackDecode feeds arbitrary bytes to the decoder of a struct and of
// an interface. It must never panic; whatever decodes must re-encode
// deterministically and decode again to an equal value.
func FuzzMsgPackDecode(f *testing.F) {
	msgpackSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		sp := codec.MsgPack[setPoint]{}
		if v, err := sp.Decode(data); err == nil {
			reencodeStable[setPoint](t, sp, v)
		}
		anyc := codec.MsgPack[any]{}
		if v, err := anyc.Decode(data); err == nil {
			reencodeStable[any](t, anyc, v)
		}
	})
}

func reencodeStable[T any](t *testing.T, c codec.Codec[T], v T) {
	b1, err := c.Encode(v)
	if err != nil {
		return // e.g. a decoded value the encoder cannot write back; not a crash
	}
	v2, err := c.Decode(b1)
	if err != nil {
		t.Fatalf("re-encoded %x does not decode: %v", b1, err)
	}
	b2, err := c.Encode(v2)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("encoding not stable across a round trip:\n%x\n%x (%v)", b1, b2, err)
	}
}

// FuzzTextScalars checks that whatever the text decoders accept re-encodes
// to a form they read back as the same value.
func FuzzTextScalars(f *testing.F) {
	for _, s := range []string{"0", "-1", "21.5", "NaN", "-Inf", "1e400", "9223372036854775808",
		"1h30m", "-1.5h", "2026-11-22T02:17:56.123456789Z", "2026-11-22T03:17:56+01:00", "true", "T"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		textStable[int64](t, codec.Int[int64]{}, data, nil)
		textStable[int16](t, codec.Int[int16]{}, data, nil)
		textStable[uint32](t, codec.Uint[uint32]{}, data, nil)
		textStable[bool](t, codec.Bool[bool]{}, data, nil)
		sameFloat := func(a, b float64) bool {
			return a == b || math.IsNaN(a) && math.IsNaN(b)
		}
		textStable[float64](t, codec.Float[float64]{}, data, sameFloat)
		textStable[time.Duration](t, codec.Duration{}, data, nil)
		textStable[time.Time](t, codec.Time{}, data, time.Time.Equal)
	})
}

func textStable[T any](t *testing.T, c codec.Codec[T], data []byte, eq func(a, b T) bool) {
	v, err := c.Decode(data)
	if err != nil {
		return
	}
	b, err := c.Encode(v)
	if err != nil {
		return // e.g. a time whose UTC year leaves 0000-9999
	}
	v2, err := c.Decode(b)
	if err != nil {
		t.Fatalf("%T: %q decoded, re-encoded as %q, which does not decode: %v", c, data, b, err)
	}
	same := reflect.DeepEqual(v, v2)
	if eq != nil {
		same = eq(v, v2)
	}
	if !same {
		t.Fatalf("%T: %q -> %v -> %q -> %v", c, data, v, b, v2)
	}
}
