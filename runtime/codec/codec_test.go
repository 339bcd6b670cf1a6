package codec_test

import (
	"bytes"
	"errors"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/codec"
)

type mode string

type setPoint struct {
	Celsius   float64           `msgpack:"celsius" json:"celsius"`
	Mode      mode              `msgpack:"mode" json:"mode"`
	UpdatedBy *string           `msgpack:"updatedBy,omitempty" json:"updatedBy,omitempty"`
	Labels    map[string]int    `msgpack:"labels,omitempty" json:"labels,omitempty"`
	Zones     map[int32]string  `msgpack:"zones,omitempty" json:"-"`
	Extra     map[string]any    `msgpack:"extra,omitempty" json:"extra,omitempty"`
	Nested    []map[string]bool `msgpack:"nested,omitempty" json:"nested,omitempty"`
}

func strp(s string) *string { return &s }

// roundTrip checks that Decode(Encode(v)) equals v under eq and that
// encoding twice gives identical bytes.
func roundTrip[T any](t *testing.T, c codec.Codec[T], v T, eq func(a, b T) bool) []byte {
	t.Helper()
	b1, err := c.Encode(v)
	if err != nil {
		t.Fatalf("Encode(%v): %v", v, err)
	}
	b2, err := c.Encode(v)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("Encode(%v) not deterministic: %q vs %q (%v)", v, b1, b2, err)
	}
	got, err := c.Decode(b1)
	if err != nil {
		t.Fatalf("Decode(%q): %v", b1, err)
	}
	if !eq(got, v) {
		t.Fatalf("round trip of %v gave %v (bytes %q)", v, got, b1)
	}
	return b1
}

func deepEqual[T any](a, b T) bool { return reflect.DeepEqual(a, b) }

func TestEveryCodecRoundTripsTypicalValues(t *testing.T) {
	full := setPoint{
		Celsius: 21.5, Mode: "heat", UpdatedBy: strp("ops"),
		Labels: map[string]int{"b": 2, "a": 1, "c": 3},
		Zones:  map[int32]string{3: "x", -1: "y", 1000: "z"},
		Extra:  map[string]any{"k": "v", "n": int8(1)},
		Nested: []map[string]bool{{"y": true, "x": false}},
	}
	t.Run("msgpack struct", func(t *testing.T) {
		roundTrip[setPoint](t, codec.MsgPack[setPoint]{}, full, deepEqual)
		roundTrip[setPoint](t, codec.MsgPack[setPoint]{}, setPoint{}, deepEqual)
	})
	t.Run("msgpack scalars", func(t *testing.T) {
		roundTrip[float64](t, codec.MsgPack[float64]{}, 21.5, deepEqual)
		roundTrip[string](t, codec.MsgPack[string]{}, "", deepEqual)
		roundTrip[[]string](t, codec.MsgPack[[]string]{}, []string{"a", "b"}, deepEqual)
		roundTrip[mode](t, codec.MsgPack[mode]{}, "cool", deepEqual)
	})
	t.Run("json struct", func(t *testing.T) {
		v := full
		v.Zones = nil
		v.Extra = map[string]any{"k": "v", "n": 1.0} // JSON numbers decode as float64
		roundTrip[setPoint](t, codec.JSON[setPoint]{}, v, deepEqual)
	})
	t.Run("string", func(t *testing.T) {
		for _, s := range []mode{"", "heat", "\xff\x00 not utf-8"} {
			roundTrip[mode](t, codec.String[mode]{}, s, deepEqual)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		for _, b := range [][]byte{{}, {0}, []byte("raw\r\n")} {
			roundTrip[[]byte](t, codec.Bytes{}, b, deepEqual)
		}
	})
	t.Run("bool", func(t *testing.T) {
		roundTrip[bool](t, codec.Bool[bool]{}, true, deepEqual)
		roundTrip[bool](t, codec.Bool[bool]{}, false, deepEqual)
	})
	t.Run("int", func(t *testing.T) {
		for _, v := range []int64{0, -1, math.MaxInt64, math.MinInt64} {
			roundTrip[int64](t, codec.Int[int64]{}, v, deepEqual)
		}
		roundTrip[int8](t, codec.Int[int8]{}, -128, deepEqual)
	})
	t.Run("uint", func(t *testing.T) {
		roundTrip[uint64](t, codec.Uint[uint64]{}, math.MaxUint64, deepEqual)
		roundTrip[uint16](t, codec.Uint[uint16]{}, 65535, deepEqual)
	})
	t.Run("float", func(t *testing.T) {
		same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
		for _, v := range []float64{0, math.Copysign(0, -1), 21.5, 0.1, 1e21, math.MaxFloat64,
			math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1)} {
			roundTrip[float64](t, codec.Float[float64]{}, v, same)
		}
		nan := roundTrip[float64](t, codec.Float[float64]{}, math.NaN(), func(a, _ float64) bool { return math.IsNaN(a) })
		if string(nan) != "NaN" {
			t.Errorf("NaN encodes as %q", nan)
		}
		roundTrip[float32](t, codec.Float[float32]{}, 0.1, func(a, b float32) bool { return a == b })
	})
	t.Run("time", func(t *testing.T) {
		berlin := time.FixedZone("CET", 3600)
		for _, v := range []time.Time{
			time.Date(2026, 11, 22, 2, 17, 56, 123456789, time.UTC),
			time.Date(2026, 11, 22, 3, 17, 56, 0, berlin),
			{},
		} {
			roundTrip[time.Time](t, codec.Time{}, v, time.Time.Equal)
		}
	})
	t.Run("duration", func(t *testing.T) {
		for _, v := range []time.Duration{0, time.Nanosecond, 90 * time.Minute, -1500 * time.Millisecond,
			math.MaxInt64, math.MinInt64} {
			roundTrip[time.Duration](t, codec.Duration{}, v, deepEqual)
		}
	})
	t.Run("text marshaler", func(t *testing.T) {
		c := codec.Text[netip.Addr, *netip.Addr]{}
		roundTrip[netip.Addr](t, c, netip.MustParseAddr("192.0.2.1"), deepEqual)
		roundTrip[netip.Addr](t, c, netip.MustParseAddr("2001:db8::1"), deepEqual)
	})
}

func TestTextCodecsWriteTheExpectedText(t *testing.T) {
	cases := []struct {
		name string
		enc  func() ([]byte, error)
		want string
	}{
		{"bool", func() ([]byte, error) { return codec.Bool[bool]{}.Encode(true) }, "true"},
		{"int", func() ([]byte, error) { return codec.Int[int]{}.Encode(-42) }, "-42"},
		{"uint", func() ([]byte, error) { return codec.Uint[uint8]{}.Encode(255) }, "255"},
		{"float64", func() ([]byte, error) { return codec.Float[float64]{}.Encode(21.5) }, "21.5"},
		{"float32 shortest", func() ([]byte, error) { return codec.Float[float32]{}.Encode(0.1) }, "0.1"},
		{"-inf", func() ([]byte, error) { return codec.Float[float64]{}.Encode(math.Inf(-1)) }, "-Inf"},
		{"time in utc", func() ([]byte, error) {
			return codec.Time{}.Encode(time.Date(2026, 1, 2, 4, 4, 5, 600, time.FixedZone("", 3600)))
		}, "2026-01-02T03:04:05.0000006Z"},
		{"duration", func() ([]byte, error) { return codec.Duration{}.Encode(90 * time.Second) }, "1m30s"},
		{"json sorted map", func() ([]byte, error) {
			return codec.JSON[map[string]int]{}.Encode(map[string]int{"b": 1, "a": 2})
		}, `{"a":2,"b":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.enc()
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestDecodeFailuresAreTypedAndNameTheCodec(t *testing.T) {
	cases := []struct {
		name  string
		codec string
		dec   func() error
	}{
		{"msgpack garbage", "msgpack", func() error { _, err := codec.MsgPack[setPoint]{}.Decode([]byte{0xc1}); return err }},
		{"msgpack trailing", "msgpack", func() error { _, err := codec.MsgPack[int]{}.Decode([]byte{0x01, 0x02}); return err }},
		{"msgpack wrong type", "msgpack", func() error { _, err := codec.MsgPack[int]{}.Decode([]byte{0xa1, 'x'}); return err }},
		{"msgpack empty", "msgpack", func() error { _, err := codec.MsgPack[int]{}.Decode(nil); return err }},
		{"json", "json", func() error { _, err := codec.JSON[setPoint]{}.Decode([]byte(`{"celsius":"x"}`)); return err }},
		{"json trailing", "json", func() error { _, err := codec.JSON[int]{}.Decode([]byte(`1 2`)); return err }},
		{"bool", "bool", func() error { _, err := codec.Bool[bool]{}.Decode([]byte("yes")); return err }},
		{"int syntax", "int", func() error { _, err := codec.Int[int]{}.Decode([]byte(" 1")); return err }},
		{"int8 range", "int", func() error { _, err := codec.Int[int8]{}.Decode([]byte("128")); return err }},
		{"uint negative", "uint", func() error { _, err := codec.Uint[uint]{}.Decode([]byte("-1")); return err }},
		{"uint8 range", "uint", func() error { _, err := codec.Uint[uint8]{}.Decode([]byte("256")); return err }},
		{"float", "float", func() error { _, err := codec.Float[float64]{}.Decode([]byte("1,5")); return err }},
		{"float32 range", "float", func() error { _, err := codec.Float[float32]{}.Decode([]byte("1e39")); return err }},
		{"time", "time", func() error { _, err := codec.Time{}.Decode([]byte("2026-11-22")); return err }},
		{"duration", "duration", func() error { _, err := codec.Duration{}.Decode([]byte("5")); return err }},
		{"text", "text", func() error {
			_, err := codec.Text[netip.Addr, *netip.Addr]{}.Decode([]byte("not-an-ip"))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.dec()
			var de *codec.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, codec.ErrDecode) {
				t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
			}
			if de.Codec != tc.codec || de.Err == nil || errors.Unwrap(err) != de.Err {
				t.Fatalf("DecodeError %+v: want codec %q and a cause", de, tc.codec)
			}
			if !strings.Contains(err.Error(), tc.codec) {
				t.Fatalf("message %q does not name the codec", err)
			}
		})
	}
}

func TestEncodeFailuresAreTyped(t *testing.T) {
	cases := []struct {
		name string
		enc  func() error
	}{
		{"json NaN", func() error { _, err := codec.JSON[float64]{}.Encode(math.NaN()); return err }},
		{"msgpack channel", func() error { _, err := codec.MsgPack[any]{}.Encode(make(chan int)); return err }},
		{"time year 10000", func() error {
			_, err := codec.Time{}.Encode(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.enc()
			var ee *codec.EncodeError
			if !errors.As(err, &ee) || !errors.Is(err, codec.ErrEncode) || ee.Err == nil {
				t.Fatalf("error %v (%T) is not an *EncodeError with a cause", err, err)
			}
		})
	}
}

func TestBytesDecodeCopiesAndNeverReturnsNil(t *testing.T) {
	src := []byte("abc")
	got, _ := codec.Bytes{}.Decode(src)
	src[0] = 'X'
	if string(got) != "abc" {
		t.Fatalf("Decode aliases its input: %q", got)
	}
	if got, _ := (codec.Bytes{}).Decode(nil); got == nil {
		t.Fatal("Decode(nil) returned nil, want empty slice")
	}
}

func TestContentTypes(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{codec.MsgPack[int]{}.ContentType(), "application/msgpack"},
		{codec.JSON[int]{}.ContentType(), "application/json"},
		{codec.Bytes{}.ContentType(), "application/octet-stream"},
		{codec.String[string]{}.ContentType(), "text/plain; charset=utf-8"},
		{codec.Float[float64]{}.ContentType(), "text/plain; charset=utf-8"},
		{codec.Time{}.ContentType(), "text/plain; charset=utf-8"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("ContentType %q, want %q", tc.got, tc.want)
		}
	}
}
