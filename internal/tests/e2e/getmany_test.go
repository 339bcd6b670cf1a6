package e2e_test

import (
	"errors"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server/servertest"
)

// forEachStore runs f against the embedded server and against an
// external one attached to mosquitto, each on a real clock.
func forEachStore(t *testing.T, f func(t *testing.T, url string)) {
	stores := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"embedded", func(t *testing.T) string { return servertest.New(t).URL() }},
		{"mosquitto", func(t *testing.T) string {
			url := brokertest.Mosquitto(t)
			servertest.NewExternal(t, url)
			return url
		}},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { f(t, s.url(t)) })
	}
}

func TestGeneratedMultiGetReadsOneKeyOfManyInstances(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string) {
		c := (&backend{url: url}).dial(t)
		ctx := testCtx(t)
		store := e2e.New(c)
		for _, id := range []string{"kitchen", "hall"} {
			if _, err := thermostat(t, c, id).SetPoint().Set(ctx, e2e.SetPoint{Celsius: 20, Mode: e2e.ModeHeat, UpdatedBy: id}); err != nil {
				t.Fatal(err)
			}
		}
		params := []e2e.ThermostatParams{{ID: "kitchen"}, {ID: "Kitchen/1"}, {ID: "absent"}, {ID: "hall"}, {ID: "kitchen"}}
		res, err := store.GetThermostatSetPoints(ctx, params, runtime.GetManyOptions{Concurrency: 2})
		if len(res) != len(params) {
			t.Fatalf("%d results for %d params", len(res), len(params))
		}
		for _, i := range []int{0, 3, 4} {
			if r := res[i]; r.Err != nil || r.Value.UpdatedBy != params[i].ID || r.Version.IsZero() || r.Key.Name() != "thermostats/"+params[i].ID+"/setPoint" {
				t.Errorf("result %d: %+v", i, r)
			}
		}
		var pe *runtime.ParamError
		if !errors.As(res[1].Err, &pe) || pe.Param != "id" || res[1].Key != nil {
			t.Errorf("refused id: %+v, want a ParamError naming id", res[1])
		}
		if !errors.Is(res[2].Err, runtime.ErrNotFound) {
			t.Errorf("absent: %+v, want ErrNotFound", res[2])
		}
		var me *runtime.GetManyError
		if !errors.As(err, &me) || me.Failed != 1 || !errors.As(err, &pe) {
			t.Fatalf("call error %v, want one failure, the ParamError", err)
		}

		// An integer and an enum parameter; a refused enum value.
		if _, err := mustZone(t, store, 3, e2e.ModeCool).Name().Set(ctx, "east"); err != nil {
			t.Fatal(err)
		}
		names, err := store.GetZoneNames(ctx, []e2e.ZoneParams{{N: 3, Mode: e2e.ModeCool}, {N: 3, Mode: "warm"}}, runtime.GetManyOptions{})
		if names[0].Err != nil || names[0].Value != "east" || !errors.As(names[1].Err, &pe) || pe.Param != "mode" || !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("GetZoneNames: %+v, %v", names, err)
		}
	})
}

func mustZone(t *testing.T, s *e2e.Store, n uint16, m e2e.Mode) *e2e.Zone {
	t.Helper()
	z, err := s.Zone(n, m)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// The message: the field that holds the undeclared enum value is
// named, for msgpack and JSON, writing and reading, through the store.
func TestCodecErrorsNameTheField(t *testing.T) {
	forEachStore(t, func(t *testing.T, url string) {
		c := (&backend{url: url}).dial(t)
		ctx := testCtx(t)
		th := thermostat(t, c, "hall")
		for _, k := range []struct {
			name string
			key  *runtime.Key[e2e.SetPoint]
			raw  []byte // a stored value with mode "warm"
		}{
			{"msgpack", th.SetPoint(), []byte("\x82\xa7celsius\xcb\x40\x34\x00\x00\x00\x00\x00\x00\xa4mode\xa4warm")},
			{"json", th.Label(), []byte(`{"celsius":20,"mode":"warm"}`)},
		} {
			_, err := k.key.Set(ctx, e2e.SetPoint{Celsius: 20})
			want := "codec: " + k.name + ": cannot encode e2e.SetPoint: SetPoint.mode: \"\" is not a declared value of enum Mode"
			var ee *codec.EncodeError
			if !errors.As(err, &ee) || ee.Path != "SetPoint.mode" || err.Error() != want || !errors.Is(err, runtime.ErrInvalidEnum) {
				t.Errorf("%s Set: %v\nwant %s", k.name, err, want)
			}
			if _, err := c.Set(ctx, []byte(k.key.Name()), k.raw, runtime.SetOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = k.key.Get(ctx)
			want = "codec: " + k.name + ": cannot decode e2e.SetPoint: SetPoint.mode: \"warm\" is not a declared value of enum Mode"
			var de *codec.DecodeError
			if !errors.As(err, &de) || de.Path != "SetPoint.mode" || err.Error() != want || !errors.Is(err, runtime.ErrInvalidEnum) {
				t.Errorf("%s Get: %v\nwant %s", k.name, err, want)
			}
		}
	})
}
