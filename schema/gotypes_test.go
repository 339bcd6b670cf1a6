package schema

import (
	"strings"
	"testing"
)

// spell is a GoTypeBuilder writing Go source.
type spell struct{}

func (spell) Scalar(path, name string) string {
	if path != "" {
		return path + "." + name
	}
	return name
}
func (spell) Slice(elem string) string   { return "[]" + elem }
func (spell) Map(elem string) string     { return "map[string]" + elem }
func (spell) Pointer(elem string) string { return "*" + elem }
func (spell) Declared(def *TypeDef) string {
	if def.Kind == KindGoType {
		return def.GoType.String()
	}
	return def.Name
}

func TestTheGoTypeOfAField(t *testing.T) {
	s, err := Load("t.yaml", []byte(`version: 1
package: p
types:
  Mode: {enum: [a, b]}
  Celsius: {go_type: example.com/units.Celsius}
  T:
    fields:
      b: bool
      raw: bytes
      at: time
      every: duration
      grid: {list: {map: "[]int8"}}
      mode: Mode
      temp: Celsius
      s: {type: string, optional: true}
      maybe_raw: {type: bytes, optional: true}
      maybe_mode: {type: Mode, optional: true}
      maybe_list: {type: "[]T", optional: true}
      maybe_at: {type: time, optional: true}
      maybe_temp: {type: Celsius, optional: true}
      self: {type: T, optional: true, go_name: Parent}
keys:
  K: {path: k, type: T}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.Types[2].Fields {
		got = append(got, f.GoName+" "+BuildGoFieldType[string](spell{}, f)+" `"+f.GoStructTag()+"`")
	}
	want := []string{
		"B bool `json:\"b\" msgpack:\"b\"`",
		"Raw []byte `json:\"raw\" msgpack:\"raw\"`",
		"At time.Time `json:\"at\" msgpack:\"at\"`",
		"Every time.Duration `json:\"every\" msgpack:\"every\"`",
		"Grid []map[string][]int8 `json:\"grid\" msgpack:\"grid\"`",
		"Mode Mode `json:\"mode\" msgpack:\"mode\"`",
		"Temp example.com/units.Celsius `json:\"temp\" msgpack:\"temp\"`",
		"S string `json:\"s,omitempty\" msgpack:\"s,omitempty\"`",
		"MaybeRaw []byte `json:\"maybe_raw,omitempty\" msgpack:\"maybe_raw,omitempty\"`",
		"MaybeMode Mode `json:\"maybe_mode,omitempty\" msgpack:\"maybe_mode,omitempty\"`",
		"MaybeList []T `json:\"maybe_list,omitempty\" msgpack:\"maybe_list,omitempty\"`",
		"MaybeAt *time.Time `json:\"maybe_at,omitempty\" msgpack:\"maybe_at,omitempty\"`",
		"MaybeTemp *example.com/units.Celsius `json:\"maybe_temp,omitempty\" msgpack:\"maybe_temp,omitempty\"`",
		"Parent *T `json:\"self,omitempty\" msgpack:\"self,omitempty\"`",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range s.Types[2].Fields {
		tags := f.GoTags()
		if len(tags) != 2 || tags["json"] != f.GoTag() || tags["msgpack"] != f.GoTag() {
			t.Errorf("%s: GoTags %v, want json and msgpack %q", f.Name, tags, f.GoTag())
		}
	}
}

func TestEveryScalarKindHasAGoType(t *testing.T) {
	for k := KindBool; k <= KindDuration; k++ {
		if _, name := k.GoScalar(); name == "" {
			t.Errorf("%s has no Go type", k)
		}
	}
	for _, k := range []Kind{KindInvalid, KindList, KindMap, KindStruct, KindEnum, KindGoType} {
		if path, name := k.GoScalar(); path != "" || name != "" {
			t.Errorf("%s is not a scalar but GoScalar says %q %q", k, path, name)
		}
	}
	for k := KindInvalid; k <= KindGoType; k++ {
		want := k == KindList || k == KindMap || k == KindBytes
		if k.GoNilable() != want {
			t.Errorf("%s: GoNilable %t, want %t", k, k.GoNilable(), want)
		}
	}
}
