package codec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime/codec"
)

// dNode is a recursive type: a stored value may nest it as deep as its
// bytes allow.
type dNode struct {
	Name string  `msgpack:"name" json:"name"`
	Kids []dNode `msgpack:"kids" json:"kids"`
}

// deepMsgPack is a dNode nested n levels under the wire name kids:
// {kids: [{kids: [ ... {} ]}]}, 6 bytes a level.
func deepMsgPack(n int, kids string) []byte {
	level := append([]byte{0x81, 0xa0 | byte(len(kids))}, kids...)
	level = append(level, 0x91)
	return append(bytes.Repeat(level, n), 0x80)
}

func deepJSON(n int, kids string) []byte {
	return []byte(strings.Repeat(`{"`+kids+`":[`, n) + "{}" + strings.Repeat("]}", n))
}

var nodeEvolution = &codec.Evolution{Structs: map[string]codec.StructEvolution{
	"Node": {Fields: []codec.FieldEvolution{
		{Name: "name", Default: `"n"`},
		{Name: "kids", RenamedFrom: []string{"children"}, Type: "[]Node"},
	}},
}}

// TestDecodeRefusesDeepNesting is the attack of issue #27: a stored value
// nesting a recursive type three million levels deep (21 MB, under the
// packet limit) overflowed the stack of every decoder, killing the
// process that read it. Every codec now refuses it with ErrTooDeep.
func TestDecodeRefusesDeepNesting(t *testing.T) {
	mp := deepMsgPack(3_000_000, "kids")
	js := deepJSON(3_000_000, "kids")
	cases := []struct {
		name string
		dec  func() error
	}{
		{"msgpack", func() error { _, err := codec.MsgPack[dNode]{}.Decode(mp); return err }},
		{"msgpack any", func() error { _, err := codec.MsgPack[any]{}.Decode(mp); return err }},
		{"evolved msgpack", func() error {
			_, err := codec.Evolved[dNode]{Codec: codec.MsgPack[dNode]{}, Evolution: nodeEvolution, Type: "Node"}.Decode(mp)
			return err
		}},
		{"json", func() error { _, err := codec.JSON[dNode]{}.Decode(js); return err }},
		{"json any", func() error { _, err := codec.JSON[any]{}.Decode(js); return err }},
		{"evolved json", func() error {
			_, err := codec.Evolved[dNode]{Codec: codec.JSON[dNode]{}, Evolution: nodeEvolution, Type: "Node"}.Decode(js)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.dec()
			if !errors.Is(err, codec.ErrTooDeep) || !errors.Is(err, codec.ErrDecode) {
				t.Fatalf("err = %v, want ErrTooDeep and ErrDecode", err)
			}
		})
	}
}

// TestDecodeDepthLimit: MaxDepth containers decode, one more does not.
func TestDecodeDepthLimit(t *testing.T) {
	nestMP := func(n int) []byte { return append(bytes.Repeat([]byte{0x91}, n-1), 0x90) }
	nestJS := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	if _, err := (codec.MsgPack[any]{}).Decode(nestMP(codec.MaxDepth)); err != nil {
		t.Errorf("msgpack at MaxDepth: %v", err)
	}
	if _, err := (codec.MsgPack[any]{}).Decode(nestMP(codec.MaxDepth + 1)); !errors.Is(err, codec.ErrTooDeep) {
		t.Errorf("msgpack at MaxDepth+1: %v, want ErrTooDeep", err)
	}
	if _, err := (codec.JSON[any]{}).Decode(nestJS(codec.MaxDepth)); err != nil {
		t.Errorf("json at MaxDepth: %v", err)
	}
	if _, err := (codec.JSON[any]{}).Decode(nestJS(codec.MaxDepth + 1)); !errors.Is(err, codec.ErrTooDeep) {
		t.Errorf("json at MaxDepth+1: %v, want ErrTooDeep", err)
	}
	// Brackets inside strings are not nesting.
	s := []byte(`["` + strings.Repeat("[", 2*codec.MaxDepth) + `\"["]`)
	if _, err := (codec.JSON[any]{}).Decode(s); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

// TestEvolvedUpgradesAtEveryDepth: an earlier name is renamed at the
// deepest level the decoder accepts, and a value deeper than that fails
// instead of decoding without its renames (it used to, silently).
func TestEvolvedUpgradesAtEveryDepth(t *testing.T) {
	for _, format := range []string{"msgpack", "json"} {
		t.Run(format, func(t *testing.T) {
			var c codec.Codec[dNode] = codec.Evolved[dNode]{Codec: codec.MsgPack[dNode]{}, Evolution: nodeEvolution, Type: "Node"}
			deep := deepMsgPack
			if format == "json" {
				c = codec.Evolved[dNode]{Codec: codec.JSON[dNode]{}, Evolution: nodeEvolution, Type: "Node"}
				deep = deepJSON
			}
			// Each level is two containers: the struct and its list.
			n := codec.MaxDepth/2 - 1
			v, err := c.Decode(deep(n, "children"))
			if err != nil {
				t.Fatalf("%d levels: %v", n, err)
			}
			levels := 0
			for ; len(v.Kids) == 1; v = v.Kids[0] {
				if v.Name != "n" {
					t.Fatalf("level %d: name %q, want the default", levels, v.Name)
				}
				levels++
			}
			if levels != n {
				t.Fatalf("decoded %d levels of kids, want %d (renames skipped)", levels, n)
			}
			for _, n := range []int{codec.MaxDepth/2 + 1, 100_000} {
				if _, err := c.Decode(deep(n, "children")); !errors.Is(err, codec.ErrTooDeep) {
					t.Fatalf("%d levels: err = %v, want ErrTooDeep", n, err)
				}
			}
		})
	}
}
