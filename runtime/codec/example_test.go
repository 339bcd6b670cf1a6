package codec_test

import (
	"errors"
	"fmt"

	"github.com/ssgen/ssgen/runtime/codec"
)

// A generated key picks a codec per value type; all of them are zero-size
// values.
func Example() {
	type SetPoint struct {
		Celsius float64 `msgpack:"celsius"`
		Mode    string  `msgpack:"mode"`
	}
	var sp codec.Codec[SetPoint] = codec.MsgPack[SetPoint]{}
	b, _ := sp.Encode(SetPoint{Celsius: 21.5, Mode: "heat"})
	v, _ := sp.Decode(b)
	fmt.Printf("%d bytes, %+v\n", len(b), v)

	var reading codec.Codec[float64] = codec.Float[float64]{}
	b, _ = reading.Encode(21.5)
	fmt.Printf("%s\n", b)
	// Output:
	// 28 bytes, {Celsius:21.5 Mode:heat}
	// 21.5
}

// Maps encode the same way every time, so encoded values can be compared
// byte for byte (the state store's NEX and VDEL, CompareAndSet).
func ExampleMsgPack_determinism() {
	c := codec.MsgPack[map[string]int]{}
	a, _ := c.Encode(map[string]int{"b": 2, "a": 1, "c": 3})
	b, _ := c.Encode(map[string]int{"c": 3, "a": 1, "b": 2})
	fmt.Println(string(a) == string(b))
	// Output: true
}

func ExampleDecodeError() {
	_, err := codec.Int[int8]{}.Decode([]byte("300"))
	var de *codec.DecodeError
	fmt.Println(errors.As(err, &de), de.Codec, errors.Is(err, codec.ErrDecode))
	fmt.Println(err)
	// Output:
	// true int true
	// codec: int: cannot decode int8: value out of range
}
