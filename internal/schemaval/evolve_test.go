package schemaval_test

import (
	"encoding/json"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
)

const evolvingSchema = `
version: 1
package: p
types:
  Mode:
    enum: [heat, {value: cool, renamed_from: [chill, cold]}]
  Reading:
    removed: [legacy]
    fields:
      celsius: {type: float64, renamed_from: temp}
      mode: {type: Mode, default: heat}
      hold: {type: duration, default: 90s}
keys:
  Reading: {path: r, type: Reading}
  JSONReading: {path: j, type: Reading, encoding: json}
  Mode: {path: m, type: Mode, encoding: string}
  Modes: {path: ms, type: "[]Mode", encoding: json}
`

// Decode reads values of an earlier schema through renamed_from and
// default, in every encoding; Encode takes an enum's earlier spelling as
// the generated UnmarshalText does, and writes the current one.
func TestCodecReadsEarlierForms(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(evolvingSchema))
	if err != nil {
		t.Fatal(err)
	}
	key := func(name string) *schemaval.Codec {
		for _, k := range s.Keys {
			if k.Name == name {
				return schemaval.ForKey(k)
			}
		}
		t.Fatalf("no key %s", name)
		return nil
	}
	for _, tc := range []struct {
		key, data, want string
	}{
		{"Reading", "\x83\xa4temp\xcb\x40\x34\x00\x00\x00\x00\x00\x00\xa4mode\xa5chill\xa6legacy\xa1x", `{"celsius":20,"mode":"cool","hold":"1m30s"}`},
		{"JSONReading", `{"temp":20,"legacy":1}`, `{"celsius":20,"mode":"heat","hold":"1m30s"}`},
		{"JSONReading", `{"celsius":1,"temp":20,"mode":"cold","hold":1}`, `{"celsius":1,"mode":"cool","hold":"1ns"}`},
		{"Mode", "chill", `"cool"`},
		{"Modes", `["cold","heat"]`, `["cool","heat"]`},
	} {
		v, err := key(tc.key).Decode([]byte(tc.data))
		if err != nil {
			t.Errorf("%s %q: %v", tc.key, tc.data, err)
			continue
		}
		got, _ := json.Marshal(v)
		if string(got) != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.key, tc.data, got, tc.want)
		}
	}
	b, err := key("Mode").Encode("chill")
	if err != nil || string(b) != "cool" {
		t.Errorf("Encode(chill) = %q, %v; want cool", b, err)
	}
	if _, err := key("Mode").Decode([]byte("warm")); err == nil {
		t.Error("an undeclared spelling decoded")
	}
}

// A moved key's earlier path resolves to the key, marked Earlier, and the
// current path knows its earlier key.
func TestResolverKnowsEarlierPaths(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(`
version: 1
package: p
groups:
  Room:
    path: rooms/{room}
    params: {room: string}
    keys:
      Reading: {path: "readings/{n}", renamed_from: "r/{n}", params: {n: uint8}, type: float64}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := schemaval.NewResolver(s)
	cur, ok := r.Resolve("rooms/kitchen/readings/7")
	if !ok || cur.Earlier || cur.MovedFrom() != "rooms/kitchen/r/7" {
		t.Fatalf("current path: %+v, %v", cur, ok)
	}
	old, ok := r.Resolve("rooms/kitchen/r/7")
	if !ok || !old.Earlier || old.Key != cur.Key || old.MovedFrom() != "" || old.ParamMap()["n"] != uint64(7) {
		t.Fatalf("earlier path: %+v, %v", old, ok)
	}
	if _, ok := r.Resolve("rooms/kitchen/r/x"); ok {
		t.Error("an earlier path with a bad parameter resolved")
	}
}
