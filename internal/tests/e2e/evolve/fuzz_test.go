package evolve_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/internal/schemaval"
	v1 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v1"
	v2 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v2"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// FuzzSchemavalReadsEvolvedValuesAsGeneratedCode feeds stored bytes to the
// generated v2 types' codecs and to schemaval's for the same keys: both
// accept and refuse the same bytes, and read the same value (compared as
// JSON, for the keys whose JSON forms agree). The generated codecs use the
// Evolution schemaval builds, which the golden test pins as the one the
// generated file declares.
func FuzzSchemavalReadsEvolvedValuesAsGeneratedCode(f *testing.F) {
	s, err := schema.LoadFile(filepath.Join("v2", "ssgen.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	ev := schemaval.Evolution(s.Types)
	key := func(name string) *schema.Key {
		for _, k := range s.Keys {
			if k.Name == name {
				return k
			}
		}
		f.Fatalf("no key %s", name)
		return nil
	}
	type reader struct {
		sv      *schemaval.Codec
		decode  func([]byte) (any, error)
		compare bool // the JSON forms of generated and schemaval values agree
	}
	readers := []reader{
		{schemaval.ForKey(key("Zones")), decodeWith(codec.Evolved[map[string]v2.Zone]{Codec: codec.JSON[map[string]v2.Zone]{}, Evolution: ev, Type: "map[string]Zone"}), true},
		{schemaval.ForKey(key("Tree")), decodeWith(codec.Evolved[v2.Node]{Codec: codec.MsgPack[v2.Node]{}, Evolution: ev, Type: "Node"}), true},
		{schemaval.ForKey(key("SetPoint")), decodeWith(codec.Evolved[v2.SetPoint]{Codec: codec.MsgPack[v2.SetPoint]{}, Evolution: ev, Type: "SetPoint"}), false},
		{schemaval.ForKey(key("Modes")), decodeWith(codec.MsgPack[[]v2.Mode]{}), true},
	}
	zones, _ := json.Marshal(map[string]v1.Zone{"a": {Name: "a", Temp: 1}})
	tree, _ := msgpack.Marshal(v1.Node{Label: "r", Kids: []v1.Node{{Label: "k"}}})
	sp, _ := msgpack.Marshal(v1.SetPoint{Temp: 1, Mode: v1.ModeChill, Zones: []v1.Zone{{}}})
	modes, _ := msgpack.Marshal([]string{"chill", "heat"})
	for i, seed := range [][]byte{zones, tree, sp, modes} {
		f.Add(uint8(i), seed)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		r := readers[int(which)%len(readers)]
		gv, gerr := r.decode(data)
		sv, serr := r.sv.Decode(data)
		if (gerr == nil) != (serr == nil) {
			t.Fatalf("%x: generated code says %v, schemaval %v", data, gerr, serr)
		}
		if gerr != nil || !r.compare {
			return
		}
		g, _ := json.Marshal(gv)
		w, _ := json.Marshal(sv)
		if string(g) != string(w) {
			t.Fatalf("%x: generated code reads %s, schemaval %s", data, g, w)
		}
	})
}

func decodeWith[T any](c codec.Codec[T]) func([]byte) (any, error) {
	return func(b []byte) (any, error) { return c.Decode(b) }
}
