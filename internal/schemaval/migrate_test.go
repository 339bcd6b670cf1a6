package schemaval_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/tests/e2e/evolve/v2"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/schema"
)

func loadFile(t *testing.T, file string) *schema.Schema {
	t.Helper()
	s, err := schema.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keyOf(t *testing.T, s *schema.Schema, name string) *schema.Key {
	t.Helper()
	for _, k := range s.AllKeys() {
		if k.QualifiedName() == name {
			return k
		}
	}
	t.Fatalf("no key %s", name)
	return nil
}

// TestCurrentIsTheGeneratedCodecs: for values the first version of a
// schema wrote, Current from the second version's schema gives the bytes
// the generated package's own codec (through its Migrations) gives: what
// ssgen migrate writes is what a program built from the schema writes.
func TestCurrentIsTheGeneratedCodecs(t *testing.T) {
	v1 := loadFile(t, "../tests/e2e/evolve/v1/ssgen.yaml")
	v2 := loadFile(t, "../tests/e2e/evolve/v2/ssgen.yaml")
	inputs := map[string][]string{
		"SetPoint":     {`{"temp":21.5,"mode":"chill","legacy":"x","zones":[{"name":"a","temp":1}],"byRoom":{"k":{"name":"b","temp":2}}}`},
		"SetPointJSON": {`{"temp":-3,"mode":"off","legacy":"","zones":[],"byRoom":{}}`},
		"Mode":         {`"chill"`, `"heat"`},
		"Modes":        {`["chill","off"]`},
		"Zones":        {`{"x":{"name":"x","temp":4}}`},
		"Tree":         {`{"label":"root","kids":[{"label":"leaf"}]}`},
		"Site.Config":  {`{"name":"c","temp":5}`},
	}
	decls := evolvev2.Migrations()
	if len(decls) != len(inputs) {
		t.Fatalf("Migrations() has %d declarations, the test %d", len(decls), len(inputs))
	}
	for _, d := range decls {
		old := schemaval.ForKey(keyOf(t, v1, d.Name))
		cur := schemaval.ForKey(keyOf(t, v2, d.Name))
		if !schemaval.RewritesOf(keyOf(t, v2, d.Name)).Evolves {
			t.Errorf("%s: RewritesOf says it does not evolve", d.Name)
		}
		for _, in := range inputs[d.Name] {
			stored, err := old.EncodeJSON([]byte(in))
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Name, in, err)
			}
			want, err := d.Codec.Current(stored)
			if err != nil {
				t.Fatalf("%s: generated Current: %v", d.Name, err)
			}
			got, err := cur.Current(stored)
			if err != nil {
				t.Fatalf("%s: Current: %v", d.Name, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s: Current %q, generated %q", d.Name, in, got, want)
			}
			if again, err := cur.Current(got); err != nil || !bytes.Equal(again, got) {
				t.Errorf("%s: Current of current bytes: %q, %v", d.Name, again, err)
			}
		}
	}
	if r := schemaval.RewritesOf(keyOf(t, v2, "Counter")); r.Any() {
		t.Errorf("Counter (an int64 that moved): %+v", r)
	}
}

// TestCurrentRefusesWhatTakesGo: a value of a versioned type stored at
// an earlier version gives a *ConversionError naming the user's function;
// one at the write version is current.
func TestCurrentRefusesWhatTakesGo(t *testing.T) {
	v1 := loadFile(t, "../tests/e2e/versions/v1/ssgen.yaml")
	v2 := loadFile(t, "../tests/e2e/versions/v2/ssgen.yaml")
	k := keyOf(t, v2, "SetPoint")
	r := schemaval.RewritesOf(k)
	if r.Versioned == nil || r.Versioned.Name != "SetPoint" {
		t.Fatalf("RewritesOf: %+v", r)
	}
	old, err := schemaval.ForKey(keyOf(t, v1, "SetPoint")).EncodeJSON([]byte(`{"fahrenheit":212,"mode":"cool"}`))
	if err != nil {
		t.Fatal(err)
	}
	cur := schemaval.ForKey(k)
	_, err = cur.Current(old)
	var ce *schemaval.ConversionError
	if !errors.As(err, &ce) || !errors.Is(err, schemaval.ErrNeedsConversion) || ce.Stored != 1 || ce.Write != 2 || ce.Function != "convertSetPointV1" {
		t.Fatalf("Current: %v", err)
	}
	if v, ok := cur.StoredVersion(old); !ok || v != 1 {
		t.Fatalf("StoredVersion %d %v", v, ok)
	}
	var generated []byte
	for _, d := range versionsv2.Migrations() {
		if d.Name == "SetPoint" {
			if generated, err = d.Codec.Current(old); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := cur.Current(generated)
	if err != nil || !bytes.Equal(got, generated) {
		t.Fatalf("Current of a version 2 value: %q, %v; want it unchanged", got, err)
	}
}

// BenchmarkCurrent compares Current from the schema (what ssgen migrate
// runs) with the generated codec's on one evolved value.
func BenchmarkCurrent(b *testing.B) {
	v1, err := schema.LoadFile("../tests/e2e/evolve/v1/ssgen.yaml")
	if err != nil {
		b.Fatal(err)
	}
	v2, err := schema.LoadFile("../tests/e2e/evolve/v2/ssgen.yaml")
	if err != nil {
		b.Fatal(err)
	}
	stored, err := schemaval.ForKey(v1.Keys[0]).EncodeJSON([]byte(`{"temp":21.5,"mode":"chill","legacy":"x","zones":[{"name":"a","temp":1}],"byRoom":{"k":{"name":"b","temp":2}}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("schemaval", func(b *testing.B) {
		c := schemaval.ForKey(v2.Keys[0])
		for b.Loop() {
			if _, err := c.Current(stored); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		c := evolvev2.Migrations()[0].Codec
		for b.Loop() {
			if _, err := c.Current(stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestGuardIsTheGeneratedGuard: the guard lock a generated Migrations
// gives a concrete key (Decl.GuardedBy) is the one ssgen migrate finds
// through the schema (Match.GuardKey), and only guarded keys have one.
func TestGuardIsTheGeneratedGuard(t *testing.T) {
	for _, c := range []struct {
		file  string
		decls []migrate.Decl
		keys  map[string]string // declaration -> a concrete key
	}{
		{"../tests/e2e/evolve/v2/ssgen.yaml", evolvev2.Migrations(), map[string]string{"Site.Config": "evolve/sites/north*/config"}},
		{"../tests/e2e/versions/v2/ssgen.yaml", versionsv2.Migrations(), map[string]string{"Room.Guarded": "versions/rooms/a b?/guarded"}},
	} {
		s := loadFile(t, c.file)
		res := schemaval.NewResolver(s)
		guarded := 0
		for _, d := range c.decls {
			k := keyOf(t, s, d.Name)
			if (d.Guard != nil) != (k.Guard != nil) {
				t.Errorf("%s: generated Guard %v, schema guard %v", d.Name, d.Guard != nil, k.Guard)
			}
			if d.Guard == nil {
				continue
			}
			guarded++
			key, ok := c.keys[d.Name]
			if !ok {
				t.Fatalf("%s: no concrete key in the test", d.Name)
			}
			m, ok := res.Resolve(key)
			if !ok || m.Key != k {
				t.Fatalf("%s: %q does not resolve to it", d.Name, key)
			}
			want, _ := m.GuardKey()
			if got, ok := d.Guard([]byte(key)); !ok || string(got) != want {
				t.Errorf("%s: Guard(%q) = %q, %v; ssgen migrate's %q", d.Name, key, got, ok, want)
			}
		}
		if guarded != len(c.keys) {
			t.Errorf("%s: %d guarded declarations, the test %d", c.file, guarded, len(c.keys))
		}
	}
}
