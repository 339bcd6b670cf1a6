// Package versions_test drives three packages generated from one schema
// as its SetPoint becomes a versioned type against a real state store:
// what versionsv1 (before versioning) writes, versionsv2 reads through
// its conversion; what versionsv2w (version 2 with write_version: 1)
// writes, versionsv1 reads unchanged.
package versions_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v1"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2w"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server/servertest"
)

func dial(t *testing.T, url string) *runtime.Client { return clienttest.Dial(t, url) }

func ctxFor(t *testing.T) context.Context { return clienttest.Context(t) }

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

type stores struct {
	c   *runtime.Client
	old *versionsv1.Store
	cur *versionsv2.Store
	wv1 *versionsv2w.Store
}

func newStores(t *testing.T) stores {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	return stores{c, versionsv1.New(c), versionsv2.New(dial(t, srv.URL())), versionsv2w.New(dial(t, srv.URL()))}
}

// stamp returns the version stamp of the raw value under path.
func stamp(t *testing.T, s stores, path string, json bool) (int, bool) {
	t.Helper()
	raw, _, err := s.c.Get(ctxFor(t), []byte(path))
	if err != nil {
		t.Fatal(err)
	}
	v, ok, err := codec.ReadVersion(raw, json)
	if err != nil {
		t.Fatalf("ReadVersion(%q): %v", raw, err)
	}
	return v, ok
}

func TestValuesWrittenBeforeVersioningReadAsVersion1(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	oldRoom := must(s.old.Room("kitchen"))(t)
	curRoom := must(s.cur.Room("kitchen"))(t)
	for _, k := range []struct {
		name  string
		path  string
		json  bool
		write *runtime.Key[versionsv1.SetPoint]
		read  *runtime.Key[versionsv2.SetPoint]
	}{
		{"msgpack", "versions/setpoint", false, s.old.SetPoint(), s.cur.SetPoint()},
		{"json", "versions/setpoint-json", true, s.old.SetPointJSON(), s.cur.SetPointJSON()},
		{"group key", "versions/rooms/kitchen/target", false, oldRoom.Target(), curRoom.Target()},
	} {
		t.Run(k.name, func(t *testing.T) {
			must(k.write.Set(ctx, versionsv1.SetPoint{Fahrenheit: 212, Mode: versionsv1.ModeCool, Note: "boil"}))(t)
			if v, ok := stamp(t, s, k.path, k.json); ok {
				t.Fatalf("v1 wrote a stamp %d", v)
			}
			got := must(k.read.Get(ctx))(t)
			want := versionsv2.SetPoint{Celsius: 100, Mode: versionsv2.ModeCool, Note: "boil"}
			if got.Value.Celsius != want.Celsius || got.Value.Mode != want.Mode || got.Value.Note != "boil" {
				t.Fatalf("v2 read %+v, want %+v", got.Value, want)
			}
			// Written again by v2, the value is version 2.
			must(k.read.Set(ctx, got.Value))(t)
			if v, ok := stamp(t, s, k.path, k.json); !ok || v != 2 {
				t.Fatalf("v2 wrote stamp %d, %v; want 2", v, ok)
			}
			again := must(k.read.Get(ctx))(t)
			if again.Value.Celsius != 100 || again.Value.Mode != versionsv2.ModeCool {
				t.Fatalf("v2 reread %+v", again.Value)
			}
			// v2w, which writes version 1, reads both too.
			wk := s.wv1.SetPoint()
			if k.json {
				wk = s.wv1.SetPointJSON()
			} else if k.name == "group key" {
				wk = must(s.wv1.Room("kitchen"))(t).Target()
			}
			if got := must(wk.Get(ctx))(t); got.Value.Celsius != 100 {
				t.Fatalf("v2w read %+v", got.Value)
			}
		})
	}
}

func TestWriteVersionKeepsOlderReadersReading(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	for _, k := range []struct {
		name  string
		path  string
		json  bool
		write *runtime.Key[versionsv2w.SetPoint]
		read  *runtime.Key[versionsv1.SetPoint]
		cur   *runtime.Key[versionsv2.SetPoint]
	}{
		{"msgpack", "versions/setpoint", false, s.wv1.SetPoint(), s.old.SetPoint(), s.cur.SetPoint()},
		{"json", "versions/setpoint-json", true, s.wv1.SetPointJSON(), s.old.SetPointJSON(), s.cur.SetPointJSON()},
	} {
		t.Run(k.name, func(t *testing.T) {
			must(k.write.Set(ctx, versionsv2w.SetPoint{Celsius: 100, Mode: versionsv2w.ModeHeat}))(t)
			if v, ok := stamp(t, s, k.path, k.json); !ok || v != 1 {
				t.Fatalf("v2w wrote stamp %d, %v; want 1", v, ok)
			}
			if got := must(k.read.Get(ctx))(t); got.Value.Fahrenheit != 212 || got.Value.Mode != versionsv1.ModeHeat || got.Value.Note != "" {
				t.Fatalf("v1 read %+v", got.Value)
			}
			if got := must(k.cur.Get(ctx))(t); got.Value.Celsius != 100 || got.Value.Mode != versionsv2.ModeHeat {
				t.Fatalf("v2 read %+v", got.Value)
			}
			// The reverse conversion's error fails the write, sending nothing.
			_, err := k.write.Set(ctx, versionsv2w.SetPoint{Celsius: -300})
			if !errors.Is(err, codec.ErrEncode) || !strings.Contains(err.Error(), "below absolute zero") {
				t.Fatalf("Set below absolute zero: %v", err)
			}
			if got := must(k.read.Get(ctx))(t); got.Value.Fahrenheit != 212 {
				t.Fatalf("after a refused write v1 reads %+v", got.Value)
			}
		})
	}
}

func TestNewerVersionIsRefused(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	for _, tc := range []struct {
		path string
		raw  string
		key  *runtime.Key[versionsv2.SetPoint]
	}{
		{"versions/setpoint-json", `{"$v":3,"kelvin":373}`, s.cur.SetPointJSON()},
		{"versions/setpoint", "\x82\xa2$v\x03\xa6kelvin\xcd\x01\x75", s.cur.SetPoint()},
	} {
		must(s.c.Set(ctx, []byte(tc.path), []byte(tc.raw), runtime.SetOptions{}))(t)
		_, err := tc.key.Get(ctx)
		var ve *codec.VersionError
		if !errors.Is(err, codec.ErrVersion) || !errors.As(err, &ve) || ve.Version != 3 || !errors.Is(err, codec.ErrDecode) {
			t.Fatalf("Get of a version 3 value: %v", err)
		}
	}
}

func TestConversionErrorFailsTheRead(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	must(s.old.SetPoint().Set(ctx, versionsv1.SetPoint{Fahrenheit: math.NaN(), Mode: versionsv1.ModeOff}))(t)
	_, err := s.cur.SetPoint().Get(ctx)
	if !errors.Is(err, codec.ErrDecode) || !strings.Contains(err.Error(), "fahrenheit is NaN") {
		t.Fatalf("Get: %v", err)
	}
}

// CompareAndSet compares a value stored as version 1 by what it reads as
// today, so the version 2 value read from it matches.
func TestCompareAndSetMatchesAValueOfAnEarlierVersion(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	old := must(s.old.Room("hall"))(t)
	lease := must(old.Owner().Acquire(ctx))(t)
	must(old.Guarded().Set(ctx, versionsv1.SetPoint{Fahrenheit: 212, Mode: versionsv1.ModeOff}))(t)
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	cur := must(s.cur.Room("hall"))(t).Guarded()
	got := must(cur.Get(ctx))(t)
	next := got.Value
	next.Celsius = 20
	if ok := must(cur.CompareAndSet(ctx, got.Value, next))(t); !ok {
		t.Fatal("CompareAndSet did not match the version 1 value")
	}
	if got := must(cur.Get(ctx))(t); got.Value.Celsius != 20 {
		t.Fatalf("after CompareAndSet: %+v", got.Value)
	}
	if v, ok := stamp(t, s, "versions/rooms/hall/guarded", false); !ok || v != 2 {
		t.Fatalf("stamp after CompareAndSet: %d, %v", v, ok)
	}
	// A value that does not match is not replaced.
	if ok := must(cur.CompareAndSet(ctx, got.Value, next))(t); ok {
		t.Fatal("CompareAndSet matched a value no longer stored")
	}
}
