package schemaval_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// FuzzDecode feeds stored bytes to Decode for every key of the fixture
// and holds it to the generated code: the same bytes accepted and refused,
// the same value read, and the value written back as the generated code
// writes it. It never panics.
func FuzzDecode(f *testing.F) {
	keys := fixtureKeys()
	s := kindsSchema(f)
	codecs := make([]*schemaval.Codec, len(keys))
	for i, g := range keys {
		codecs[i] = keyCodec(f, s, g.name())
		// Seeds: the generated code's bytes of each fixture value.
		for _, b := range g.seeds() {
			f.Add(uint8(i), b)
		}
	}
	for i := range keys {
		f.Add(uint8(i), []byte{0xc0})            // MessagePack nil
		f.Add(uint8(i), []byte("null"))          // JSON null
		f.Add(uint8(i), []byte{0x81, 0xa1, 'b'}) // a truncated map
		// Nesting past codec.MaxDepth (issue #27): refused, not a stack overflow.
		f.Add(uint8(i), append(bytes.Repeat([]byte{0x91}, codec.MaxDepth), 0x90))
		f.Add(uint8(i), []byte(strings.Repeat("[", codec.MaxDepth+1)+strings.Repeat("]", codec.MaxDepth+1)))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		i := int(which) % len(keys)
		if holdsGoType(codecs[i].Type(), map[*schema.TypeDef]bool{}) {
			// Its own codec decides what it accepts; schemaval only must
			// not fail badly.
			_, _ = codecs[i].Decode(data)
			return
		}
		keys[i].fuzz(t, codecs[i], data)
	})
}

func holdsGoType(t *schema.Type, seen map[*schema.TypeDef]bool) bool {
	switch t.Kind {
	case schema.KindGoType:
		return true
	case schema.KindList, schema.KindMap:
		return holdsGoType(t.Elem, seen)
	case schema.KindStruct:
		if seen[t.Def] {
			return false
		}
		seen[t.Def] = true
		for _, f := range t.Def.Fields {
			if holdsGoType(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// FuzzParseJSON feeds text to ParseJSON and then to Encode of every
// fixture key: ParseJSON accepts only valid JSON (refusing valid JSON
// only for a member named twice), and nothing panics.
func FuzzParseJSON(f *testing.F) {
	for _, seed := range []string{
		`{"zeta":1,"alpha":"a"}`, `{"a":1,"a":2}`, `[1,2,{"x":null}]`, `"heat"`, `1e400`,
		`18446744073709551616`, `-0`, `{"mode":"heat","inner":{"name":""},"self":null}`, `{`, `[1,]`, ` "x" y`,
	} {
		f.Add(uint8(0), []byte(seed))
	}
	keys := fixtureKeys()
	s := kindsSchema(f)
	codecs := make([]*schemaval.Codec, len(keys))
	for i, g := range keys {
		codecs[i] = keyCodec(f, s, g.name())
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		v, err := schemaval.ParseJSON(data)
		if err == nil && !json.Valid(data) {
			t.Fatalf("ParseJSON accepted %q, which is not JSON", data)
		}
		if err != nil && json.Valid(data) && !strings.Contains(err.Error(), "member given twice") && !strings.Contains(err.Error(), "nests deeper") {
			t.Fatalf("ParseJSON refused valid JSON %q: %v", data, err)
		}
		if err != nil {
			return
		}
		c := codecs[int(which)%len(codecs)]
		b, err := c.Encode(v)
		if err != nil {
			return
		}
		// What Encode writes, Decode reads.
		if _, err := c.Decode(b); err != nil {
			t.Fatalf("%s: Encode(%s) wrote %x, which Decode refuses: %v", keys[int(which)%len(keys)].name(), data, b, err)
		}
	})
}
