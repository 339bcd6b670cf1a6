package codec_test

import (
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/codec"
)

var benchSetPoint = setPoint{Celsius: 21.5, Mode: "heat", UpdatedBy: strp("operator-7")}

var benchWithMaps = setPoint{
	Celsius: 21.5, Mode: "heat",
	Labels: map[string]int{"floor": 2, "wing": 3, "room": 214, "zone": 7},
	Zones:  map[int32]string{1: "north", 2: "south", 3: "east", 4: "west"},
}

func benchCodec[T any](b *testing.B, c codec.Codec[T], v T) {
	data, err := c.Encode(v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := c.Encode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := c.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMsgPackStruct(b *testing.B) {
	type flat struct {
		Celsius   float64 `msgpack:"celsius"`
		Mode      string  `msgpack:"mode"`
		UpdatedBy string  `msgpack:"updatedBy"`
	}
	benchCodec[flat](b, codec.MsgPack[flat]{}, flat{21.5, "heat", "operator-7"})
}

// BenchmarkMsgPackStructWithMaps includes the pass that puts map entries in
// a fixed order.
func BenchmarkMsgPackStructWithMaps(b *testing.B) {
	benchCodec[setPoint](b, codec.MsgPack[setPoint]{}, benchWithMaps)
}

func BenchmarkJSONStruct(b *testing.B) {
	benchCodec[setPoint](b, codec.JSON[setPoint]{}, benchSetPoint)
}

func BenchmarkString(b *testing.B) { benchCodec[string](b, codec.String[string]{}, "heat") }

func BenchmarkInt(b *testing.B) { benchCodec[int64](b, codec.Int[int64]{}, 1234567) }

func BenchmarkFloat(b *testing.B) { benchCodec[float64](b, codec.Float[float64]{}, 21.5) }

func BenchmarkTime(b *testing.B) {
	benchCodec[time.Time](b, codec.Time{}, time.Date(2026, 11, 22, 2, 17, 56, 123456789, time.UTC))
}
