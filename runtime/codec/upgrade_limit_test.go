package codec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime/codec"
)

type bigT struct {
	List []int          `msgpack:"list" json:"list"`
	Map  map[string]int `msgpack:"map" json:"map"`
	Name string         `msgpack:"name" json:"name"`
}

var bigEvolution = &codec.Evolution{Structs: map[string]codec.StructEvolution{
	"Big": {Fields: []codec.FieldEvolution{
		{Name: "list", Default: "[1,2,3]"},
		{Name: "map", Default: `{"a":1}`},
		{Name: "name", Default: `"` + strings.Repeat("x", 100) + `"`},
	}},
}}

// TestUpgradeBoundsDefaults is issue #27's amplification: a 1 MB stored
// list of empty maps, each lacking three defaults, decoded to a 1 GB
// value. The upgrade now refuses to insert more defaults than the stored
// size allows (codec.ErrUpgradeLimit), and a value within it decodes.
func TestUpgradeBoundsDefaults(t *testing.T) {
	mp := codec.Evolved[[]bigT]{Codec: codec.MsgPack[[]bigT]{}, Evolution: bigEvolution, Type: "[]Big"}
	js := codec.Evolved[[]bigT]{Codec: codec.JSON[[]bigT]{}, Evolution: bigEvolution, Type: "[]Big"}
	mpList := func(n int) []byte {
		return append([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte{0x80}, n)...)
	}
	jsList := func(n int) []byte { return []byte("[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]") }

	for _, n := range []int{1_000_000, 100_000} {
		if _, err := mp.Decode(mpList(n)); !errors.Is(err, codec.ErrUpgradeLimit) || !errors.Is(err, codec.ErrDecode) {
			t.Errorf("msgpack, %d empty maps: err = %v, want ErrUpgradeLimit", n, err)
		}
		if _, err := js.Decode(jsList(n)); !errors.Is(err, codec.ErrUpgradeLimit) {
			t.Errorf("json, %d empty objects: err = %v, want ErrUpgradeLimit", n, err)
		}
	}
	// Within the budget: a thousand elements, three defaults each.
	for name, dec := range map[string]func() ([]bigT, error){
		"msgpack": func() ([]bigT, error) { return mp.Decode(mpList(1000)) },
		"json":    func() ([]bigT, error) { return js.Decode(jsList(1000)) },
	} {
		v, err := dec()
		if err != nil || len(v) != 1000 || len(v[999].List) != 3 || v[999].Map["a"] != 1 {
			t.Errorf("%s, 1000 elements: %v", name, err)
		}
	}
}

// TestUpgradeBoundsDefaultBytes: large defaults are bounded by bytes too,
// not only by count.
func TestUpgradeBoundsDefaultBytes(t *testing.T) {
	ev := &codec.Evolution{Structs: map[string]codec.StructEvolution{
		"Big": {Fields: []codec.FieldEvolution{{Name: "name", Default: `"` + strings.Repeat("x", 4096) + `"`}}},
	}}
	c := codec.Evolved[[]bigT]{Codec: codec.JSON[[]bigT]{}, Evolution: ev, Type: "[]Big"}
	n := 1000 // 3 KB stored, 4 MB of defaults
	if _, err := c.Decode([]byte("[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]")); !errors.Is(err, codec.ErrUpgradeLimit) {
		t.Fatalf("err = %v, want ErrUpgradeLimit", err)
	}
}
