package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// rmw is one generated read-modify-write path writing next over what the
// key holds (cur, read at version ver). wrote reports whether it wrote.
type rmw struct {
	name  string
	write func(ctx context.Context, k *runtime.Key[e2e.Device], cur e2e.Device, ver hlc.HLC, next e2e.Device) (wrote bool, err error)
}

var rmwPaths = []rmw{
	{"Update", func(ctx context.Context, k *runtime.Key[e2e.Device], _ e2e.Device, _ hlc.HLC, next e2e.Device) (bool, error) {
		changed, _, err := k.Update(ctx, func(e2e.Device, bool) (e2e.Device, error) { return next, nil })
		return changed, err
	}},
	{"SetIfVersion", func(ctx context.Context, k *runtime.Key[e2e.Device], _ e2e.Device, ver hlc.HLC, next e2e.Device) (bool, error) {
		ok, _, err := k.SetIfVersion(ctx, next, ver)
		return ok, err
	}},
	{"CompareAndSet", func(ctx context.Context, k *runtime.Key[e2e.Device], cur e2e.Device, _ hlc.HLC, next e2e.Device) (bool, error) {
		return k.CompareAndSet(ctx, cur, next)
	}},
}

func TestEveryReadModifyWriteRefusesAWriteThatBreaksATransitionRule(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	base := e2e.Device{Serial: "A-1", Seq: 5, Seen: t0, Owner: "ops",
		Info: &e2e.DeviceInfo{Since: t0, Level: 3, Uptime: time.Minute},
		Tags: []e2e.DeviceInfo{{Since: t0, Level: 9}}}
	with := func(f func(d *e2e.Device)) e2e.Device {
		d := base
		info := *base.Info
		d.Info = &info
		f(&d)
		return d
	}
	tests := []struct {
		name     string
		next     e2e.Device
		path     string // "" when the write is fine
		rule     string
		old, new any
	}{
		{"fine: seq up, seen same", with(func(d *e2e.Device) { d.Seq = 6 }), "", "", nil, nil},
		{"fine: time later, level same, uptime up", with(func(d *e2e.Device) { d.Seen = t0.Add(time.Second); d.Info.Uptime = time.Hour; d.Seq = 6 }), "", "", nil, nil},
		{"fine: same instant in another zone", with(func(d *e2e.Device) { d.Seq = 6; d.Info.Since = t0.In(time.FixedZone("x", 3600)) }), "", "", nil, nil},
		{"fine: list elements are not checked", with(func(d *e2e.Device) { d.Seq = 6; d.Tags = []e2e.DeviceInfo{{Level: 1}} }), "", "", nil, nil},
		{"immutable changed", with(func(d *e2e.Device) { d.Serial = "B-2"; d.Seq = 6 }), "Device.serial", runtime.RuleImmutable, "A-1", "B-2"},
		{"optional immutable dropped", with(func(d *e2e.Device) { d.Owner = ""; d.Seq = 6 }), "Device.owner", runtime.RuleImmutable, "ops", nil},
		{"increasing kept equal", base, "Device.seq", runtime.RuleIncreasing, uint64(5), uint64(5)},
		{"increasing moved down", with(func(d *e2e.Device) { d.Seq = 4 }), "Device.seq", runtime.RuleIncreasing, uint64(5), uint64(4)},
		{"time moved back", with(func(d *e2e.Device) { d.Seq = 6; d.Seen = t0.Add(-time.Nanosecond) }), "Device.seen", runtime.RuleNonDecreasing, t0, t0.Add(-time.Nanosecond)},
		{"nested immutable time", with(func(d *e2e.Device) { d.Seq = 6; d.Info.Since = t0.Add(time.Hour) }), "Device.info.since", runtime.RuleImmutable, t0, t0.Add(time.Hour)},
		{"nested optional monotonic down", with(func(d *e2e.Device) { d.Seq = 6; d.Info.Level = 2 }), "Device.info.level", runtime.RuleNonDecreasing, int32(3), int32(2)},
		{"nested optional monotonic dropped", with(func(d *e2e.Device) { d.Seq = 6; d.Info.Level = 0 }), "Device.info.level", runtime.RuleNonDecreasing, int32(3), nil},
		{"nested duration down", with(func(d *e2e.Device) { d.Seq = 6; d.Info.Uptime = time.Second }), "Device.info.uptime", runtime.RuleNonDecreasing, time.Minute, time.Second},
		{"nested struct dropped", with(func(d *e2e.Device) { d.Seq = 6; d.Info = nil }), "Device.info.since", runtime.RuleImmutable, t0, nil},
	}
	for _, p := range rmwPaths {
		for i, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				th := thermostat(t, c, strings.ToLower(p.name)+"-"+string(rune('a'+i)))
				k := th.Device()
				if _, err := k.Set(ctx, base); err != nil { // a blind Set checks nothing
					t.Fatal(err)
				}
				before, _, err := c.Get(ctx, []byte(k.Name()))
				if err != nil {
					t.Fatal(err)
				}
				e, err := k.Get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				wrote, err := p.write(ctx, k, e.Value, e.Version, tt.next)
				after, _, gerr := c.Get(ctx, []byte(k.Name()))
				if gerr != nil {
					t.Fatal(gerr)
				}
				if tt.path == "" {
					if err != nil || !wrote {
						t.Fatalf("a fine write: wrote %v, %v", wrote, err)
					}
					return
				}
				var te *runtime.TransitionError
				if !errors.Is(err, runtime.ErrTransition) || !errors.As(err, &te) {
					t.Fatalf("got wrote=%v, %v; want a *TransitionError", wrote, err)
				}
				if te.Key != k.Name() || te.Path != tt.path || te.Rule != tt.rule {
					t.Errorf("got key %q path %q rule %q, want %q %q %q", te.Key, te.Path, te.Rule, k.Name(), tt.path, tt.rule)
				}
				if !sameValue(te.Old, tt.old) || !sameValue(te.New, tt.new) {
					t.Errorf("got old %v new %v, want %v %v", te.Old, te.New, tt.old, tt.new)
				}
				if wrote || !bytes.Equal(before, after) {
					t.Errorf("the refused write changed the key: wrote %v, %x -> %x", wrote, before, after)
				}
			})
		}
	}
}

func sameValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

func TestTransitionRulesLetTheFirstWriteAndAnAbsentFieldBeSet(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	th := thermostat(t, c, "fresh")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	// Over nothing, every path writes whatever it is given.
	if ok, _, err := th.Registration().SetIfVersion(ctx, e2e.Device{Serial: "x", Seq: 0}, hlc.HLC{}); !ok || err != nil {
		t.Fatalf("zero version over nothing: %v %v", ok, err)
	}
	if changed, _, err := th.Device().Update(ctx, func(_ e2e.Device, found bool) (e2e.Device, error) {
		return e2e.Device{Serial: "x", Seq: 1, Seen: t0}, nil
	}); !changed || err != nil {
		t.Fatalf("first Update: %v %v", changed, err)
	}
	// An optional field absent before may be set; a struct absent before
	// may appear with anything in it.
	if changed, _, err := th.Device().Update(ctx, func(cur e2e.Device, _ bool) (e2e.Device, error) {
		cur.Seq++
		cur.Owner = "ops"
		cur.Info = &e2e.DeviceInfo{Since: t0, Level: -4}
		return cur, nil
	}); !changed || err != nil {
		t.Fatalf("absent -> set: %v %v", changed, err)
	}
	// A blind Set is not checked: the docs say so.
	if _, err := th.Registration().Set(ctx, e2e.Device{Serial: "other"}); err != nil {
		t.Fatalf("blind Set: %v", err)
	}
}
