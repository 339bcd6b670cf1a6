package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/engine"
)

func (b *backend) put(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := b.srv.Engine().Put([]byte(k), []byte("1"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestListersYieldEachInstanceOnceAndSkipKeysThatDoNotFit(t *testing.T) {
	b := start(t)
	b.put(t,
		// kitchen has three keys and a lock: one instance.
		"thermostats/kitchen/setPoint", "thermostats/kitchen/reading", "thermostats/kitchen/owner", "thermostats/kitchen/firmware",
		"thermostats/hall-2/mode",
		"thermostats/kitchen/unknown", // not a key of the group (kitchen is listed for its others)
		"thermostats/lonely/unknown",  // nor is this: no instance "lonely"
		"thermostats/BAD/setPoint",    // misses the id pattern [a-z0-9-]+
		"thermostats/a/b/setPoint",    // a parameter never spans '/'
		"thermostats/kitchen",         // the group's path itself is no key
		"thermostats/k*tchen/reading", // '*' misses the pattern
		"zones/3/heat/name", "zones/4/cool/name",
		"zones/03/heat/name",    // not how 3 is rendered
		"zones/70000/heat/name", // out of uint16
		"zones/-1/heat/name",    // out of uint16
		"zones/4/warm/name",     // not a Mode
		"zones/5/heat/other",    // not a key of Zone
		"other/key",
	)
	store := e2e.New(b.dial(t))
	ctx := testCtx(t)

	var ids []string
	l := store.ListThermostats(runtime.ListOptions{})
	for it, err := range l.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if it.Handle.SetPoint().Name() != "thermostats/"+it.Params.ID+"/setPoint" {
			t.Fatalf("handle %q for params %+v", it.Handle.SetPoint().Name(), it.Params)
		}
		ids = append(ids, it.Params.ID)
	}
	slices.Sort(ids)
	if want := []string{"hall-2", "kitchen"}; !slices.Equal(ids, want) {
		t.Fatalf("listed thermostats %q, want %q", ids, want)
	}
	if !l.Done() || l.Skipped() != 5 {
		t.Fatalf("Done %v, Skipped %d; want true, 5", l.Done(), l.Skipped())
	}

	var zones []string
	for it, err := range store.ListZones(runtime.ListOptions{}).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		zones = append(zones, fmt.Sprintf("%d/%s", it.Params.N, it.Params.Mode))
	}
	slices.Sort(zones)
	if want := []string{"3/heat", "4/cool"}; !slices.Equal(zones, want) {
		t.Fatalf("listed zones %q, want %q", zones, want)
	}
}

func TestAListerResumesFromItsCursorWithoutSkipping(t *testing.T) {
	b := start(t)
	const n = 600
	for i := range n {
		id := fmt.Sprintf("t%04d", i)
		b.put(t, "thermostats/"+id+"/reading", "thermostats/"+id+"/mode")
	}
	store := e2e.New(b.dial(t))
	ctx := testCtx(t)
	seen := map[string]bool{}
	var saved runtime.Cursor
	l := store.ListThermostats(runtime.ListOptions{})
	for it, err := range l.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seen[it.Params.ID] = true
		saved = l.Cursor()
		if len(seen) == n/3 {
			break // as if the process stopped here
		}
	}
	for it, err := range store.ListThermostats(runtime.ListOptions{From: saved}).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seen[it.Params.ID] = true
	}
	if len(seen) != n {
		t.Fatalf("first listing and its resumption saw %d thermostats, want %d", len(seen), n)
	}
}

func TestAGroupWatchReportsInstancesWithTheirParameters(t *testing.T) {
	b := start(t)
	b.put(t, "thermostats/kitchen/reading")
	c := b.dial(t)
	store := e2e.New(c)
	ctx := testCtx(t)
	wctx, stop := context.WithCancel(ctx)
	events := make(chan runtime.GroupEvent[e2e.ThermostatParams, *e2e.Thermostat], 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range store.WatchThermostats(wctx, runtime.PatternWatchOptions{Rescan: -1}) {
			if err != nil {
				t.Errorf("watch: %v", err)
				continue
			}
			events <- ev
		}
	}()
	defer func() { stop(); <-done }()

	ev := waitFor(t, ctx, events, func(runtime.GroupEvent[e2e.ThermostatParams, *e2e.Thermostat]) bool { return true })
	if ev.Kind != runtime.EventResync || ev.Params.ID != "kitchen" || ev.Member != "Reading" || string(ev.Value) != "1" {
		t.Fatalf("initial event %+v", ev)
	}

	// A key of no thermostat and a new thermostat, both written by this
	// client: the first is not watched, the second is found at once.
	if _, err := c.Set(ctx, []byte("thermostats/BAD/mode"), []byte("heat"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	den := thermostat(t, c, "den")
	if _, err := den.Mode().Set(ctx, e2e.ModeCool); err != nil {
		t.Fatal(err)
	}
	ev = waitFor(t, ctx, events, func(runtime.GroupEvent[e2e.ThermostatParams, *e2e.Thermostat]) bool { return true })
	if ev.Kind != runtime.EventSet || ev.Params.ID != "den" || ev.Member != "Mode" {
		t.Fatalf("event %+v, want den's Mode set", ev)
	}
	if mode, err := ev.Handle.Mode().Codec().Decode(ev.Value); err != nil || mode != e2e.ModeCool {
		t.Fatalf("decoded %q, %v", mode, err)
	}
	if _, err := den.Mode().Delete(ctx); err != nil {
		t.Fatal(err)
	}
	ev = waitFor(t, ctx, events, func(runtime.GroupEvent[e2e.ThermostatParams, *e2e.Thermostat]) bool { return true })
	if ev.Kind != runtime.EventDelete || ev.Params.ID != "den" || ev.Member != "Mode" {
		t.Fatalf("event %+v, want den's Mode deleted", ev)
	}
	// Only kitchen's reading is still watched: BAD never was, den's mode went with its delete.
	coreWatched := func() int { return c.Stats().WatchedKeys }
	for i := 0; coreWatched() != 1; i++ {
		if i == 2000 {
			t.Fatalf("WatchedKeys %d, want 1", coreWatched())
		}
		next(ctx, events, 5*time.Millisecond)
	}
}
