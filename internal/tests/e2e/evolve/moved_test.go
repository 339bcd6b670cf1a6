package evolve_test

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v1"
	v2 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v2"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

func site1(t *testing.T, s *v1.Store, id string) *v1.Site {
	t.Helper()
	return must(s.Site(id))(t)
}

func site2(t *testing.T, s *v2.Store, id string) *v2.Site {
	t.Helper()
	return must(s.Site(id))(t)
}

// Keys that moved (renamed_from on a key) read what v1 wrote at the
// earlier path until v2 writes them; a v2 write stores under the new path
// and deletes the earlier key.
func TestMovedKeysReadV1ValuesAndMoveThemOnWrite(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)

	must(old.Counter().Set(ctx, 41))(t)
	must(site1(t, old, "a").Probe(3).Set(ctx, 1.5))(t)
	must(site1(t, old, "a").Config().Set(ctx, v1.Zone{Name: "a", Temp: 20}))(t)

	if got := must(cur.Counter().Get(ctx))(t); got.Value != 41 {
		t.Errorf("Counter read %d, want v1's 41", got.Value)
	}
	if got := must(site2(t, cur, "a").Probe(3).Get(ctx))(t); got.Value != 1.5 {
		t.Errorf("Probe read %v, want v1's 1.5", got.Value)
	}
	if got := must(site2(t, cur, "a").Config().Get(ctx))(t); got.Value != (v2.Zone{Name: "a", Celsius: 20, Enabled: true}) {
		t.Errorf("Config read %+v", got.Value)
	}
	if _, err := site2(t, cur, "b").Probe(3).Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("a key absent under both names: %v, want ErrNotFound", err)
	}

	// Absent under its new name but present under the earlier one: not
	// absent.
	if ok := must2(cur.Counter().SetIfAbsent(ctx, 1))(t); ok {
		t.Error("SetIfAbsent wrote over v1's value")
	}

	// A write moves the value: v1's key is gone, v2's holds it.
	must(cur.Counter().Set(ctx, 42))(t)
	if _, err := old.Counter().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("v1's key after v2's Set: %v, want it deleted", err)
	}
	if got := must(cur.Counter().Get(ctx))(t); got.Value != 42 {
		t.Errorf("Counter read %d after Set", got.Value)
	}
	if n := must2(c.Get(ctx, []byte("evolve/counter")))(t); len(n) == 0 {
		t.Error("nothing stored under the new name")
	}

	// Update on a guarded key reads the earlier key under the guard
	// lease, writes the new one and deletes the earlier one, fenced.
	changed := must2(site2(t, cur, "a").Config().Update(ctx, func(z v2.Zone, found bool) (v2.Zone, error) {
		if !found || z.Celsius != 20 {
			t.Errorf("Update saw %+v, %v", z, found)
		}
		z.Celsius++
		return z, nil
	}))(t)
	if !changed {
		t.Fatal("Update did not write")
	}
	if _, err := site1(t, old, "a").Config().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("v1's guarded key after Update: %v, want it deleted", err)
	}
	if got := must(site2(t, cur, "a").Config().Get(ctx))(t); got.Value.Celsius != 21 {
		t.Errorf("Config after Update: %+v", got.Value)
	}

	// Delete removes both names.
	must(site1(t, old, "a").Probe(4).Set(ctx, 4))(t)
	must(site2(t, cur, "a").Probe(4).Set(ctx, 5))(t)
	must(site1(t, old, "a").Probe(4).Set(ctx, 4))(t) // a v1 writer still at work
	if deleted := must(site2(t, cur, "a").Probe(4).Delete(ctx))(t); !deleted {
		t.Error("Delete said nothing was there")
	}
	if _, err := site1(t, old, "a").Probe(4).Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("v1's key after Delete: %v", err)
	}
	if _, err := site2(t, cur, "a").Probe(4).Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("after Delete: %v, want ErrNotFound", err)
	}
}

// The multi-get of a moved key falls back per instance.
func TestMovedKeyMultiGetReadsEitherName(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)
	must(site1(t, old, "x").Config().Set(ctx, v1.Zone{Name: "x", Temp: 1}))(t)
	must(site2(t, cur, "y").Config().Set(ctx, v2.Zone{Name: "y", Celsius: 2}))(t)
	res := must(cur.GetSiteConfigs(ctx, []v2.SiteParams{{Site: "x"}, {Site: "y"}, {Site: "z"}}, runtime.GetManyOptions{}))(t)
	if res[0].Err != nil || res[0].Value != (v2.Zone{Name: "x", Celsius: 1, Enabled: true}) {
		t.Errorf("x (written by v1): %+v, %v", res[0].Value, res[0].Err)
	}
	if res[1].Err != nil || res[1].Value.Celsius != 2 {
		t.Errorf("y (written by v2): %+v, %v", res[1].Value, res[1].Err)
	}
	if !errors.Is(res[2].Err, runtime.ErrNotFound) {
		t.Errorf("z (never written): %v, want ErrNotFound", res[2].Err)
	}
}

// must2(call())(t) is the first value of a call that returns two and an
// error, or a fatal error.
func must2[A, B any](a A, _ B, err error) func(*testing.T) A {
	return func(t *testing.T) A {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// A guarded key whose earlier key carries a fencing token (v1 wrote it
// under the guard lease) is moved under the lease too: CompareAndSet and
// SetIfVersion read the earlier key, write the new one and delete the
// earlier one with the lease's token.
func TestMovedGuardedKeyMovesUnderTheLease(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)
	for _, id := range []string{"cas", "ver"} {
		s := site1(t, old, id)
		lease := must(s.Owner().Acquire(ctx))(t)
		must(s.Config().Set(ctx, v1.Zone{Name: id, Temp: 10}))(t) // fenced: the client holds the lease
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cas := site2(t, cur, "cas").Config()
	if ok := must(cas.CompareAndSet(ctx, v2.Zone{Name: "cas", Celsius: 10, Enabled: true}, v2.Zone{Name: "cas", Celsius: 11}))(t); !ok {
		t.Fatal("CompareAndSet did not match v1's value")
	}
	ver := site2(t, cur, "ver").Config()
	e := must(ver.Get(ctx))(t)
	if ok := must2(ver.SetIfVersion(ctx, v2.Zone{Name: "ver", Celsius: 12}, e.Version))(t); !ok {
		t.Fatal("SetIfVersion did not match the version read from v1's key")
	}
	for id, want := range map[string]float64{"cas": 11, "ver": 12} {
		if _, err := site1(t, old, id).Config().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s: v1's key: %v, want it deleted", id, err)
		}
		if got := must(site2(t, cur, id).Config().Get(ctx))(t); got.Value.Celsius != want {
			t.Errorf("%s: %+v", id, got.Value)
		}
	}
}

// Listing a group finds an instance whose only value is still under a
// moved key's earlier path; a group watch labels that path's events
// Earlier, so the earlier key's deletion when the value moves is told
// apart from the member's deletion.
func TestGroupListingAndWatchingDuringAMove(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)
	must(site1(t, old, "a").Config().Set(ctx, v1.Zone{Name: "a"}))(t)
	must(site2(t, cur, "b").Config().Set(ctx, v2.Zone{Name: "b"}))(t)

	var sites []string
	for it, err := range cur.ListSites(runtime.ListOptions{}).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, it.Params.Site)
	}
	if len(sites) != 2 || sites[0] != "a" || sites[1] != "b" {
		t.Fatalf("listed %q, want a (v1's value at the earlier path) and b", sites)
	}

	type event = runtime.GroupEvent[v2.SiteParams, *v2.Site]
	wctx, stop := context.WithCancel(ctx)
	events := make(chan event, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range cur.WatchSites(wctx, runtime.PatternWatchOptions{Rescan: -1}) {
			if err != nil {
				t.Errorf("watch: %v", err)
				continue
			}
			events <- ev
		}
	}()
	defer func() { stop(); <-done }()
	next := func() event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
			return event{}
		}
	}
	initial := map[string]bool{}
	for range 2 {
		ev := next()
		if ev.Kind != runtime.EventResync || ev.Member != "Config" {
			t.Fatalf("initial event %+v", ev)
		}
		initial[ev.Params.Site] = ev.Earlier
	}
	if earlier, ok := initial["a"]; !ok || !earlier {
		t.Errorf("a's value at the earlier path: %v, %v; want an Earlier event", earlier, ok)
	}
	if earlier, ok := initial["b"]; !ok || earlier {
		t.Errorf("b's value: %v, %v; want an event of the current key", earlier, ok)
	}

	// v2 writes a's config: a Set of the current key and the Delete of
	// the earlier one, marked Earlier (events of two keys come in either
	// order).
	must(site2(t, cur, "a").Config().Set(ctx, v2.Zone{Name: "a", Celsius: 1}))(t)
	got := map[runtime.EventKind]event{}
	for range 2 {
		ev := next()
		got[ev.Kind] = ev
	}
	if set, ok := got[runtime.EventSet]; !ok || set.Earlier || set.Params.Site != "a" || set.Member != "Config" {
		t.Errorf("events %+v, want a's Config set", got)
	}
	if del, ok := got[runtime.EventDelete]; !ok || !del.Earlier || del.Params.Site != "a" || del.Member != "Config" {
		t.Errorf("events %+v, want the earlier key's delete, marked Earlier", got)
	}
}

// A group that moved (renamed_from on the group) moves every key: each
// reads its key under the group's earlier path, with the key's own
// earlier path when it moved too, and a write moves it.
func TestMovedGroupReadsAndMovesEachKey(t *testing.T) {
	srv := servertest.New(t)
	ctx := ctxFor(t)
	c := dial(t, srv.URL())
	old, cur := v1.New(c), v2.New(c)
	must(old.Line(7).Speed().Set(ctx, 1.25))(t)
	must(old.Line(7).Target().Set(ctx, 2.5))(t)
	if got := must(cur.Line(7).Speed().Get(ctx))(t); got.Value != 1.25 {
		t.Errorf("Speed read %v, want v1's 1.25", got.Value)
	}
	if got := must(cur.Line(7).Target().Get(ctx))(t); got.Value != 2.5 {
		t.Errorf("Target (moved with its group and renamed in it) read %v, want v1's 2.5", got.Value)
	}
	must(cur.Line(7).Target().Set(ctx, 3))(t)
	if _, err := old.Line(7).Target().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("v1's key after v2's write: %v, want it deleted", err)
	}
	if n := must2(c.Get(ctx, []byte("evolve/conveyors/7/target")))(t); len(n) == 0 {
		t.Error("nothing under the new path")
	}
	// Listing sees the new path only: line 7 once its Target moved, not
	// line 8 whose values are all at the earlier path.
	must(old.Line(8).Speed().Set(ctx, 1))(t)
	var lines []uint16
	for it, err := range cur.ListLines(runtime.ListOptions{}).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, it.Params.Line)
	}
	if len(lines) != 1 || lines[0] != 7 {
		t.Errorf("listed lines %v, want [7]", lines)
	}
}
