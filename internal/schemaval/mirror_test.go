package schemaval

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/kinds"
	"github.com/ssgen/ssgen/internal/testkit/kinds/units"
	"github.com/ssgen/ssgen/schema"
)

// generatedTypes are the types the kinds package declares, by name: the
// value types of its schema and the handles whose methods return its keys.
var generatedTypes = map[string]reflect.Type{
	"Mode":       reflect.TypeFor[kinds.Mode](),
	"Celsius":    reflect.TypeFor[units.Celsius](),
	"Inner":      reflect.TypeFor[kinds.Inner](),
	"Plain":      reflect.TypeFor[kinds.Plain](),
	"Everything": reflect.TypeFor[kinds.Everything](),
	"Reading":    reflect.TypeFor[kinds.Reading](),
	"Store":      reflect.TypeFor[*kinds.Store](),
	"Thermostat": reflect.TypeFor[*kinds.Thermostat](),
	"Zone":       reflect.TypeFor[*kinds.Zone](),
}

// TestMirrorIsTheGeneratedType holds the Go types schemaval builds to the
// ones generated code declares, for every declared struct and every key
// of the kinds fixture, in both encodings that hold structs: field for
// field the same names, struct tags and pointers, and the same Go types,
// except where schemaval stands in for a declared enum or go_type.
func TestMirrorIsTheGeneratedType(t *testing.T) {
	s, err := schema.LoadFile(filepath.Join("..", "testkit", "kinds", "ssgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []schema.Encoding{schema.EncodingMsgpack, schema.EncodingJSON} {
		t.Run(string(enc), func(t *testing.T) {
			for _, def := range s.Types {
				gen, ok := generatedTypes[def.Name]
				if !ok {
					t.Fatalf("type %s of the fixture is missing from generatedTypes", def.Name)
				}
				if def.Kind != schema.KindStruct {
					continue
				}
				mir := newMirror(enc).structOf(def, 0)
				agreeStruct(t, def.Name, def, gen, mir, enc, map[*schema.TypeDef]bool{})
			}
			for _, k := range s.AllKeys() {
				gen := keyValueType(t, k)
				mir := newMirror(enc).typeOf(k.Type, 0)
				agree(t, k.QualifiedName(), k.Type, gen, mir, enc, map[*schema.TypeDef]bool{})
			}
		})
	}
}

// keyValueType returns T of the *runtime.Key[T] generated code returns
// for key k.
func keyValueType(t *testing.T, k *schema.Key) reflect.Type {
	t.Helper()
	owner := "Store"
	if k.Group != nil {
		owner = k.Group.Name
	}
	handle, ok := generatedTypes[owner]
	if !ok {
		t.Fatalf("handle %s of key %s is missing from generatedTypes", owner, k.QualifiedName())
	}
	m, ok := handle.MethodByName(k.Name)
	if !ok {
		t.Fatalf("%v has no method %s", handle, k.Name)
	}
	codecMethod, ok := m.Type.Out(0).MethodByName("Codec")
	if !ok {
		t.Fatalf("%v has no method Codec", m.Type.Out(0))
	}
	decode, _ := codecMethod.Type.Out(0).MethodByName("Decode")
	return decode.Type.Out(0)
}

// agree compares the generated Go type gen of schema type st with
// schemaval's mirror mir. open holds the structs being compared further
// up, where a recursive type stops.
func agree(t *testing.T, at string, st *schema.Type, gen, mir reflect.Type, enc schema.Encoding, open map[*schema.TypeDef]bool) {
	t.Helper()
	switch st.Kind {
	case schema.KindList, schema.KindMap:
		want := reflect.Slice
		if st.Kind == schema.KindMap {
			want = reflect.Map
		}
		if gen.Kind() != want || mir.Kind() != want {
			t.Errorf("%s: generated %v, schemaval %v, want both %v", at, gen, mir, want)
			return
		}
		if want == reflect.Map && (gen.Key() != stringType || mir.Key() != stringType) {
			t.Errorf("%s: generated %v, schemaval %v, want string keys", at, gen, mir)
			return
		}
		agree(t, at+"[]", st.Elem, gen.Elem(), mir.Elem(), enc, open)
	case schema.KindEnum:
		if gen.Kind() != reflect.String || gen.Name() != st.Def.Name || gen.PkgPath() != kindsPath {
			t.Errorf("%s: generated %v, want the string type %s.%s", at, gen, kindsPath, st.Def.Name)
		}
		if mir != enumType {
			t.Errorf("%s: schemaval %v, want its enum stand-in %v", at, mir, enumType)
		}
	case schema.KindGoType:
		if gen.PkgPath() != st.Def.GoType.ImportPath || gen.Name() != st.Def.GoType.Name {
			t.Errorf("%s: generated %v, want the go_type %s", at, gen, st.Def.GoType)
		}
		want := anyType
		if enc == schema.EncodingJSON {
			want = rawJSONType
		}
		if mir != want {
			t.Errorf("%s: schemaval %v, want its go_type stand-in %v", at, mir, want)
		}
	case schema.KindStruct:
		agreeStruct(t, at, st.Def, gen, mir, enc, open)
	default:
		if gen != mir {
			t.Errorf("%s: generated %v, schemaval %v", at, gen, mir)
		}
	}
}

func agreeStruct(t *testing.T, at string, def *schema.TypeDef, gen, mir reflect.Type, enc schema.Encoding, open map[*schema.TypeDef]bool) {
	t.Helper()
	if gen.Kind() != reflect.Struct || gen.Name() != def.Name || gen.PkgPath() != kindsPath {
		t.Errorf("%s: generated %v, want the struct %s.%s", at, gen, kindsPath, def.Name)
		return
	}
	if open[def] {
		return // compared further up
	}
	open[def] = true
	defer delete(open, def)
	if mir.Kind() != reflect.Struct || mir.NumField() != gen.NumField() || gen.NumField() != len(def.Fields) {
		t.Errorf("%s: generated %v, schemaval %v, want structs of %d fields", at, gen, mir, len(def.Fields))
		return
	}
	for i, f := range def.Fields {
		g, m := gen.Field(i), mir.Field(i)
		fat := at + "." + f.Name
		if g.Name != f.GoName || m.Name != f.GoName {
			t.Errorf("%s: generated field %s, schemaval %s, want %s", fat, g.Name, m.Name, f.GoName)
		}
		if g.Tag != m.Tag {
			t.Errorf("%s: generated tag `%s`, schemaval `%s`", fat, g.Tag, m.Tag)
		}
		gt, mt := g.Type, m.Type
		if (gt.Kind() == reflect.Pointer) != (mt.Kind() == reflect.Pointer) || (gt.Kind() == reflect.Pointer) != f.GoPointer() {
			t.Errorf("%s: generated %v, schemaval %v, want a pointer: %t", fat, gt, mt, f.GoPointer())
			continue
		}
		if f.GoPointer() {
			gt, mt = gt.Elem(), mt.Elem()
		}
		agree(t, fat, f.Type, gt, mt, enc, open)
	}
}

var kindsPath = reflect.TypeFor[kinds.Mode]().PkgPath()

// TestGoScalarsAreTheNamedTypes checks that every scalar kind's Go type,
// as package schema names it, is the type schemaval builds.
func TestGoScalarsAreTheNamedTypes(t *testing.T) {
	for k := schema.KindBool; k <= schema.KindDuration; k++ {
		path, name := k.GoScalar()
		rt, ok := goScalars[goName{path, name}]
		if !ok {
			t.Errorf("%s: Go type %q %q is not in goScalars", k, path, name)
			continue
		}
		spelled := rt.Name()
		if rt == reflect.TypeFor[[]byte]() {
			spelled = "[]byte"
		}
		if rt.PkgPath() != path || spelled != name {
			t.Errorf("%s: goScalars has %v for %q %q", k, rt, path, name)
		}
	}
	if len(goScalars) != int(schema.KindDuration-schema.KindBool)+1 {
		t.Errorf("goScalars holds %d types, want one per scalar kind", len(goScalars))
	}
}
