package schema

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestThermostatModel pins the model a code generator walks, for the
// thermostat schema the docs use.
func TestThermostatModel(t *testing.T) {
	s, err := LoadFile("testdata/valid/thermostat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.Package != "thermostat" || s.Encoding != EncodingMsgpack {
		t.Fatalf("header %d %q %q", s.Version, s.Package, s.Encoding)
	}
	mode, sp := s.Type("Mode"), s.Type("SetPoint")
	if mode.Kind != KindEnum || len(mode.Values) != 3 || mode.Values[0].Value != "heat" || mode.Values[0].GoName != "ModeHeat" {
		t.Fatalf("Mode %+v", mode)
	}
	if sp.Kind != KindStruct || sp.Doc != "Desired temperature, written by operators." {
		t.Fatalf("SetPoint %+v", sp)
	}
	var fields []string
	for _, f := range sp.Fields {
		fields = append(fields, f.Name+"/"+f.GoName+"/"+f.Type.String())
	}
	if want := []string{"celsius/Celsius/float64", "mode/Mode/Mode", "updatedBy/UpdatedBy/string"}; !reflect.DeepEqual(fields, want) {
		t.Fatalf("fields %v, want %v", fields, want)
	}
	if !sp.Fields[2].Optional || sp.Fields[0].Optional || sp.Fields[1].Type.Def != mode {
		t.Fatal("optional flags or type references wrong")
	}

	g := s.Group("Thermostat")
	if g == nil || g.Path.String() != "thermostats/{id}" || len(g.Params) != 1 || g.Params[0].Type.Kind != KindString {
		t.Fatalf("group %+v", g)
	}
	set, reading, owner := g.Keys[0], g.Keys[1], g.Locks[0]
	if set.Name != "SetPoint" || set.FullPath().String() != "thermostats/{id}/setPoint" || set.Type.Def != sp ||
		set.Encoding != EncodingMsgpack || set.EncodingSet || set.Guard != owner || set.TTL != 0 {
		t.Fatalf("SetPoint key %+v", set)
	}
	if reading.Encoding != EncodingString || !reading.EncodingSet || reading.TTL != 30*time.Second || reading.Guard != nil {
		t.Fatalf("Reading key %+v", reading)
	}
	if owner.TTL != 10*time.Second || owner.FullPath().String() != "thermostats/{id}/owner" || owner.Group != g {
		t.Fatalf("Owner lock %+v", owner)
	}
	if ps := set.AllParams(); len(ps) != 1 || ps[0] != g.Params[0] || set.FullPath().Segments[1].Param != ps[0] {
		t.Fatal("AllParams does not hand out the group's parameter, or the path does not point at it")
	}
	if got := len(s.AllKeys()); got != 2 || s.AllLocks()[0] != owner {
		t.Fatalf("AllKeys %d", got)
	}
}

func TestKeyParamsComeAfterGroupParams(t *testing.T) {
	s, err := LoadFile("testdata/valid/everything.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := s.Group("Line").Keys[4] // Severity: sites/{site}/lines/{line}/severity/{level}
	var names []string
	for _, p := range k.AllParams() {
		names = append(names, p.Name+" "+p.Type.String())
	}
	if want := []string{"site string", "line uint16", "level Level"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("params %v, want %v", names, want)
	}
	if k.QualifiedName() != "Line.Severity" || s.Keys[0].QualifiedName() != "Config" || s.Keys[0].Guard != s.Locks[0] {
		t.Fatal("qualified names or top-level guard wrong")
	}
	blob := s.Keys[2].Params[0]
	if blob.Pattern != "[a-z0-9-]+" || !blob.Regexp.MatchString("a-1") || blob.Regexp.MatchString("A") || blob.Regexp.MatchString("x/y") {
		t.Fatalf("pattern %q not anchored as documented", blob.Pattern)
	}
	if got := s.GoImports(); !reflect.DeepEqual(got, []string{"example.com/units"}) {
		t.Fatalf("GoImports %v", got)
	}
	alarm := s.Type("Alarm")
	if ack := alarm.Fields[8]; ack.GoName != "Acknowledgement" || !ack.Optional || ack.Type.Def != s.Type("Ack") {
		t.Fatalf("ack field %+v", ack)
	}
	if m := alarm.Fields[6].Type; m.String() != "[][]float32" || m.Kind != KindList || m.Elem.Elem.Kind != KindFloat32 {
		t.Fatalf("matrix %s", m)
	}
	if s.Type("Level").Values[2].GoName != "LevelEmergencyStop" {
		t.Fatal("enum go_name ignored")
	}
}

func TestErrorListExposesEachError(t *testing.T) {
	_, err := Load("f.yaml", []byte("version: 1\npackage: p\nbogus: 1\n"))
	var e *Error
	if !errors.As(err, &e) || e.Pos != (Pos{"f.yaml", 3, 1}) {
		t.Fatalf("errors.As found %v in %v", e, err)
	}
	if err.Error() != `f.yaml:3:1: schema: unknown field "bogus" (want one of: version, package, doc, encoding, types, groups, keys, locks, roles)` {
		t.Fatalf("message %q", err)
	}
}
