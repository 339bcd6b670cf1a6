// Package evolve_test drives two packages generated from two versions of
// one schema against a real state store: what evolvev1 writes, evolvev2
// reads, field by field, through every declaration of docs/schema.md's
// "Evolving a schema".
package evolve_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	v1 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v1"
	v2 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v2"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server/servertest"
)

func dial(t *testing.T, url string) *runtime.Client { return clienttest.Dial(t, url) }

func ctxFor(t *testing.T) context.Context { return clienttest.Context(t) }

// must(call())(t) is call's value, or a fatal error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// The defaults evolvev2's schema declares, as Go values.
var (
	since     = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defaulted = v2.SetPoint{
		UpdatedBy: "unknown",
		Hold:      90 * time.Second,
		Since:     since,
		Limits:    []int16{10, 30},
		Schedule:  v2.Window{From: 8, To: 17},
		Fallback:  v2.ModeOff,
	}
)

// utc puts sp's time in UTC: msgpack decodes times in the local zone.
func utc(sp v2.SetPoint) v2.SetPoint {
	sp.Since = sp.Since.UTC()
	return sp
}

func withDefaults(sp v2.SetPoint) v2.SetPoint {
	sp.UpdatedBy, sp.Hold, sp.Since = defaulted.UpdatedBy, defaulted.Hold, defaulted.Since
	sp.Limits, sp.Schedule, sp.Fallback = defaulted.Limits, defaulted.Schedule, defaulted.Fallback
	return sp
}

func TestValuesWrittenByV1ReadThroughV2(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	old := v1.New(dial(t, srv.URL()))
	cur := v2.New(dial(t, srv.URL()))

	sp1 := v1.SetPoint{
		Temp: 21.5, Mode: v1.ModeChill, Legacy: "dropped on purpose",
		Zones:  []v1.Zone{{Name: "north", Temp: 19}, {Name: "south", Temp: 23}},
		ByRoom: map[string]v1.Zone{"hall": {Name: "hall", Temp: 18}},
	}
	want := withDefaults(v2.SetPoint{
		Celsius: 21.5, Mode: v2.ModeCool,
		Zones:  []v2.Zone{{Name: "north", Celsius: 19, Enabled: true}, {Name: "south", Celsius: 23, Enabled: true}},
		ByRoom: map[string]v2.Zone{"hall": {Name: "hall", Celsius: 18, Enabled: true}},
	})
	for _, k := range []struct {
		name  string
		write *runtime.Key[v1.SetPoint]
		read  *runtime.Key[v2.SetPoint]
	}{
		{"msgpack", old.SetPoint(), cur.SetPoint()},
		{"json", old.SetPointJSON(), cur.SetPointJSON()},
	} {
		t.Run(k.name, func(t *testing.T) {
			must(k.write.Set(ctx, sp1))(t)
			got := must(k.read.Get(ctx))(t)
			if !reflect.DeepEqual(utc(got.Value), want) {
				t.Errorf("v2 read\n%#v\nwant\n%#v", got.Value, want)
			}
			// Written again by v2, the value reads the same.
			must(k.read.Set(ctx, got.Value))(t)
			again := must(k.read.Get(ctx))(t)
			if !reflect.DeepEqual(utc(again.Value), want) {
				t.Errorf("v2 reread\n%+v\nwant\n%+v", again.Value, want)
			}
		})
	}

	t.Run("enum stored as text", func(t *testing.T) {
		must(old.Mode().Set(ctx, v1.ModeChill))(t)
		if got := must(cur.Mode().Get(ctx))(t); got.Value != v2.ModeCool {
			t.Errorf("v2 read %q, want %q", got.Value, v2.ModeCool)
		}
	})
	t.Run("list of enums", func(t *testing.T) {
		must(old.Modes().Set(ctx, []v1.Mode{v1.ModeHeat, v1.ModeChill, v1.ModeOff}))(t)
		got := must(cur.Modes().Get(ctx))(t)
		if w := []v2.Mode{v2.ModeHeat, v2.ModeCool, v2.ModeOff}; !reflect.DeepEqual(got.Value, w) {
			t.Errorf("v2 read %q, want %q", got.Value, w)
		}
	})
	t.Run("map of structs in json", func(t *testing.T) {
		must(old.Zones().Set(ctx, map[string]v1.Zone{"a": {Name: "a", Temp: 1}, "b": {Name: "b", Temp: 2}}))(t)
		got := must(cur.Zones().Get(ctx))(t)
		w := map[string]v2.Zone{"a": {Name: "a", Celsius: 1, Enabled: true}, "b": {Name: "b", Celsius: 2, Enabled: true}}
		if !reflect.DeepEqual(got.Value, w) {
			t.Errorf("v2 read %+v, want %+v", got.Value, w)
		}
	})
	t.Run("recursive struct", func(t *testing.T) {
		tree := v1.Node{Label: "root", Kids: []v1.Node{{Label: "a", Kids: []v1.Node{{Label: "a1"}}}, {Label: "b"}}}
		must(old.Tree().Set(ctx, tree))(t)
		got := must(cur.Tree().Get(ctx))(t)
		w := v2.Node{Title: "root", Kids: []v2.Node{{Title: "a", Kids: []v2.Node{{Title: "a1"}}}, {Title: "b"}}}
		if !reflect.DeepEqual(got.Value, w) {
			t.Errorf("v2 read %+v, want %+v", got.Value, w)
		}
	})
}

// A value v2 writes itself keeps what it wrote: a default applies only to
// a stored value without the field, never to a zero written on purpose.
func TestV2KeepsWhatItWrites(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	cur := v2.New(dial(t, srv.URL()))
	zero := v2.SetPoint{Mode: v2.ModeHeat, Fallback: v2.ModeHeat, Since: since}
	must(cur.SetPoint().Set(ctx, zero))(t)
	got := must(cur.SetPoint().Get(ctx))(t)
	if !reflect.DeepEqual(utc(got.Value), zero) {
		t.Errorf("read %+v, want %+v", got.Value, zero)
	}
}

// ssgen get and the console read stored values through schemaval, without
// generated code: for every key, what they show of a v1 value is what the
// generated v2 code reads.
func TestSchemavalReadsV1ValuesAsGeneratedV2Code(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)
	s, err := schema.LoadFile(filepath.Join("v2", "ssgen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	must(old.Zones().Set(ctx, map[string]v1.Zone{"a": {Name: "a", Temp: 1.5}}))(t)
	must(old.Tree().Set(ctx, v1.Node{Label: "root", Kids: []v1.Node{{Label: "kid"}}}))(t)
	must(old.Modes().Set(ctx, []v1.Mode{v1.ModeChill}))(t)
	must(old.Mode().Set(ctx, v1.ModeChill))(t)
	generated := map[string]any{
		"Zones": must(cur.Zones().Get(ctx))(t).Value,
		"Tree":  must(cur.Tree().Get(ctx))(t).Value,
		"Modes": must(cur.Modes().Get(ctx))(t).Value,
		"Mode":  must(cur.Mode().Get(ctx))(t).Value,
	}
	for _, k := range s.Keys {
		want, ok := generated[k.Name]
		if !ok {
			continue
		}
		raw, _, err := c.Get(ctx, []byte(k.FullPath().String()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := schemaval.ForKey(k).Decode(raw)
		if err != nil {
			t.Fatalf("%s: schemaval: %v", k.Name, err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: schemaval reads %s, generated code %s", k.Name, g, w)
		}
	}
}
