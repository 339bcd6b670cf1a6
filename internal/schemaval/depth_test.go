package schemaval_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

const recursiveSchema = `
version: 1
package: p
types:
  Node:
    fields:
      name: {type: string, default: n}
      kids: {type: "[]Node", renamed_from: children}
  Plain:
    fields:
      name: string
      kids: "[]Plain"
keys:
  Tree: {path: tree, type: Node}
  JSONTree: {path: jtree, type: Node, encoding: json}
  Plain: {path: plain, type: Plain}
`

// TestDecodeRefusesDeepNesting is issue #27's attack on ssgen get
// --schema and the console: a recursive type stored three million levels
// deep overflowed the stack. Decode now refuses it with codec.ErrTooDeep,
// with and without evolution, and a value deeper than the bound is never
// decoded without its renames.
func TestDecodeRefusesDeepNesting(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(recursiveSchema))
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[string]*schemaval.Codec{}
	for _, k := range s.Keys {
		codecs[k.Name] = schemaval.ForKey(k)
	}
	mp := func(n int, kids string) []byte {
		level := append([]byte{0x81, 0xa0 | byte(len(kids))}, kids...)
		return append(bytes.Repeat(append(level, 0x91), n), 0x80)
	}
	js := func(n int, kids string) []byte {
		return []byte(strings.Repeat(`{"`+kids+`":[`, n) + "{}" + strings.Repeat("]}", n))
	}
	for _, tc := range []struct {
		key  string
		data []byte
	}{
		{"Tree", mp(3_000_000, "kids")},
		{"Tree", mp(6000, "children")},
		{"Plain", mp(3_000_000, "kids")},
		{"JSONTree", js(3_000_000, "kids")},
		{"JSONTree", js(6000, "children")},
	} {
		_, err := codecs[tc.key].Decode(tc.data)
		if !errors.Is(err, codec.ErrTooDeep) || !errors.Is(err, codec.ErrDecode) {
			t.Errorf("%s (%d bytes): err = %v, want ErrTooDeep", tc.key, len(tc.data), err)
		}
	}
	// Within the bound the renames apply at every depth. (The mirror of
	// a recursive type holds schemaval.MaxDepth levels of it.)
	const n = schemaval.MaxDepth - 1
	v, err := codecs["Tree"].Decode(mp(n, "children"))
	if err != nil {
		t.Fatal(err)
	}
	levels := 0
	for {
		o := v.(schemaval.Object)
		if o[0].Name != "name" || o[0].Value != "n" {
			t.Fatalf("level %d: %v", levels, o)
		}
		kids, _ := o[1].Value.([]any)
		if len(kids) == 0 {
			break
		}
		v = kids[0]
		levels++
	}
	if levels != n {
		t.Fatalf("decoded %d levels, want %d", levels, n)
	}
}
