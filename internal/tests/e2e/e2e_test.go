package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// backend is a running embedded state store and its fake clock.
type backend struct {
	srv   *server.Server
	url   string
	clock *engine.FakeClock
}

// start runs an embedded state store on a fake clock for one test.
func start(t *testing.T) *backend {
	t.Helper()
	clock := engine.NewFakeClock(time.Now())
	srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) { o.Now = clock.Now }))
	return &backend{srv: srv, url: srv.URL(), clock: clock}
}

func (b *backend) dial(t *testing.T) *runtime.Client { return clienttest.Dial(t, b.url) }

func testCtx(t *testing.T) context.Context { return clienttest.Context(t) }

func thermostat(t *testing.T, c *runtime.Client, id string) *e2e.Thermostat {
	t.Helper()
	th, err := e2e.New(c).Thermostat(id)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestEveryCodecRoundTripsThroughTheStore(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	th := thermostat(t, c, "kitchen")

	sp := e2e.SetPoint{Celsius: 21.5, Mode: e2e.ModeHeat, UpdatedBy: "ops", Zones: map[string]int{"b": 2, "a": 1}}
	roundTrip(t, ctx, th.SetPoint(), sp)
	roundTrip(t, ctx, th.Label(), sp)
	roundTrip(t, ctx, th.Reading(), 19.25)
	roundTrip(t, ctx, th.Mode(), e2e.ModeCool)
	roundTrip(t, ctx, th.Firmware(), []byte{0, 1, 2, 0xff})
	roundTrip(t, ctx, th.Counter(), int64(-7))

	// The stored bytes are what the schema promises other readers.
	for key, want := range map[string]string{
		"thermostats/kitchen/reading": "19.25",
		"thermostats/kitchen/mode":    "cool",
		"thermostats/kitchen/label":   `{"celsius":21.5,"mode":"heat","updatedBy":"ops","zones":{"a":1,"b":2}}`,
	} {
		raw, _, err := c.Get(ctx, []byte(key))
		if err != nil || string(raw) != want {
			t.Errorf("%s holds %q (%v), want %q", key, raw, err, want)
		}
	}
	zone, err := e2e.New(c).Zone(7, e2e.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ctx, zone.Name(), "west wing")
	if raw, _, err := c.Get(ctx, []byte("zones/7/off/name")); err != nil || string(raw) != "west wing" {
		t.Errorf("zone name stored as %q (%v)", raw, err)
	}
}

func roundTrip[T any](t *testing.T, ctx context.Context, k *runtime.Key[T], v T) {
	t.Helper()
	ver, err := k.Set(ctx, v)
	if err != nil {
		t.Fatalf("%s: Set: %v", k.Name(), err)
	}
	e, err := k.Get(ctx)
	if err != nil {
		t.Fatalf("%s: Get: %v", k.Name(), err)
	}
	if fmt.Sprint(e.Value) != fmt.Sprint(v) || e.Version.Compare(ver) != 0 {
		t.Fatalf("%s: got %v at %s, want %v at %s", k.Name(), e.Value, e.Version, v, ver)
	}
}

func TestAnUndeclaredEnumValueIsNeitherWrittenNorRead(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	th := thermostat(t, c, "hall")
	if _, err := th.Mode().Set(ctx, e2e.Mode("warm")); !errors.Is(err, runtime.ErrInvalidEnum) {
		t.Fatalf("Set of an undeclared value: %v, want ErrInvalidEnum", err)
	}
	if _, err := th.SetPoint().Set(ctx, e2e.SetPoint{Mode: "warm"}); !errors.Is(err, runtime.ErrInvalidEnum) {
		t.Fatalf("msgpack Set of an undeclared value: %v, want ErrInvalidEnum", err)
	}
	if _, err := c.Set(ctx, []byte("thermostats/hall/mode"), []byte("warm"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	var ee *runtime.EnumError
	if _, err := th.Mode().Get(ctx); !errors.As(err, &ee) || ee.Type != "Mode" || ee.Value != "warm" {
		t.Fatalf("Get of a stored undeclared value: %v, want an EnumError", err)
	}
}

func TestTheKeysTTLAppliesToEverySetUnlessOverridden(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	kitchen, hall := thermostat(t, c, "kitchen"), thermostat(t, c, "hall")
	if got := kitchen.Reading().DefaultTTL(); got != 30*time.Second {
		t.Fatalf("DefaultTTL %s, want the schema's 30s", got)
	}
	if _, err := kitchen.Reading().Set(ctx, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := hall.Reading().Set(ctx, 20, runtime.WithoutTTL()); err != nil {
		t.Fatal(err)
	}
	if _, err := kitchen.Label().Set(ctx, e2e.SetPoint{Mode: e2e.ModeOff}); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(30*time.Second + time.Millisecond)
	b.srv.Engine().Expire()
	if _, err := kitchen.Reading().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("reading after its TTL: %v, want ErrNotFound", err)
	}
	if _, err := hall.Reading().Get(ctx); err != nil {
		t.Errorf("reading written WithoutTTL: %v", err)
	}
	if _, err := kitchen.Label().Get(ctx); err != nil {
		t.Errorf("key without TTL: %v", err)
	}
}

func TestWatchReportsTypedSetAndDeleteEvents(t *testing.T) {
	b := start(t)
	c := b.dial(t)
	ctx := testCtx(t)
	k := thermostat(t, c, "porch").Label()

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan runtime.KeyEvent[e2e.SetPoint], 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range k.Watch(wctx) {
			if err != nil {
				t.Errorf("watch: %v", err)
				continue
			}
			events <- ev
		}
	}()
	defer func() { stop(); <-done }()

	// The registration is made once iteration starts; write until the
	// watcher sees a write, so the rest of the test runs registered.
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("watcher saw none of 100 writes")
		}
		if _, err := k.Set(ctx, e2e.SetPoint{Celsius: float64(i), Mode: e2e.ModeOff}); err != nil {
			t.Fatal(err)
		}
		if ev, ok := next(ctx, events, 100*time.Millisecond); ok && ev.Kind == runtime.EventSet {
			break
		}
	}
	want := e2e.SetPoint{Celsius: 99.5, Mode: e2e.ModeHeat, UpdatedBy: "watch"}
	ver, err := k.Set(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitFor(t, ctx, events, func(ev runtime.KeyEvent[e2e.SetPoint]) bool {
		return ev.Kind == runtime.EventSet && ev.Version.Compare(ver) == 0
	}); fmt.Sprint(ev.Value) != fmt.Sprint(want) {
		t.Fatalf("set event carries %+v, want %+v", ev.Value, want)
	}
	if _, err := k.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, events, func(ev runtime.KeyEvent[e2e.SetPoint]) bool { return ev.Kind == runtime.EventDelete })
}

func next[T any](ctx context.Context, ch <-chan T, d time.Duration) (T, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v, true
	case <-timer.C:
	case <-ctx.Done():
	}
	var zero T
	return zero, false
}

func waitFor[T any](t *testing.T, ctx context.Context, ch <-chan T, match func(T) bool) T {
	t.Helper()
	for {
		select {
		case v := <-ch:
			if match(v) {
				return v
			}
		case <-ctx.Done():
			t.Fatal("event never came")
		}
	}
}

func TestConcurrentUpdatesFromSeveralClientsLoseNothing(t *testing.T) {
	b := start(t)
	ctx := testCtx(t)
	const clients, workers, each = 2, 3, 4
	var wg sync.WaitGroup
	errs := make(chan error, clients*workers)
	for range clients {
		th := thermostat(t, b.dial(t), "shared")
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					_, _, err := th.Counter().Update(ctx, func(cur int64, _ bool) (int64, error) { return cur + 1, nil })
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e, err := thermostat(t, b.dial(t), "shared").Counter().Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e.Value != clients*workers*each {
		t.Fatalf("counter %d after %d updates: updates were lost", e.Value, clients*workers*each)
	}
}

func TestCompareAndSetSwapsOnlyFromTheExpectedValue(t *testing.T) {
	b := start(t)
	ctx := testCtx(t)
	c1, c2 := b.dial(t), b.dial(t)
	k1, k2 := thermostat(t, c1, "cas").SetPoint(), thermostat(t, c2, "cas").SetPoint()
	a := e2e.SetPoint{Celsius: 20, Mode: e2e.ModeHeat, Zones: map[string]int{"x": 1, "y": 2}}
	// The guard is free, so this first write goes unfenced.
	if _, err := k1.Set(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Both clients race to move the value on from a; exactly one wins.
	var wg sync.WaitGroup
	wins := make(chan int, 2)
	for i, k := range []*runtime.Key[e2e.SetPoint]{k1, k2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := k.CompareAndSet(ctx, a, e2e.SetPoint{Celsius: float64(30 + i), Mode: e2e.ModeCool})
			if err != nil {
				t.Errorf("CompareAndSet: %v", err)
			}
			if ok {
				wins <- i
			}
		}()
	}
	wg.Wait()
	close(wins)
	var winners []int
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d CompareAndSet calls won from the same value, want 1", len(winners))
	}
	e, err := k2.Get(ctx)
	if err != nil || e.Value.Celsius != float64(30+winners[0]) {
		t.Fatalf("value after the race: %+v, %v", e.Value, err)
	}
}

func TestInvalidParametersAreRefusedBeforeAnyRequestNamingTheParameter(t *testing.T) {
	store := e2e.New(nil) // no request may be sent, so no client is needed
	for _, tt := range []struct {
		id, reason string
	}{
		{"", "empty"},
		{"a/b", "contains '/'"},
		{"Kitchen", "does not match"},
	} {
		th, err := store.Thermostat(tt.id)
		var pe *runtime.ParamError
		if th != nil || !errors.As(err, &pe) || pe.Param != "id" || pe.Value != tt.id || !strings.Contains(pe.Reason, tt.reason) {
			t.Errorf("Thermostat(%q) = %v, %v; want a ParamError for id: %s", tt.id, th, err, tt.reason)
		}
		if !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Errorf("Thermostat(%q): %v does not match ErrInvalidArgument", tt.id, err)
		}
	}
	_, err := store.Zone(1, e2e.Mode("warm"))
	var pe *runtime.ParamError
	if !errors.As(err, &pe) || pe.Param != "mode" || pe.Value != "warm" {
		t.Errorf("Zone with an undeclared mode: %v, want a ParamError for mode", err)
	}
	if _, err := store.Zone(65535, e2e.ModeHeat); err != nil {
		t.Errorf("valid zone refused: %v", err)
	}
}

func TestALeaseTakeoverFencesOutTheFormerHolder(t *testing.T) {
	b := start(t)
	ctx := testCtx(t)
	a, z := thermostat(t, b.dial(t), "lobby"), thermostat(t, b.dial(t), "lobby")

	leaseA, err := a.Owner().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := z.Owner().TryAcquire(ctx); ok || err != nil {
		t.Fatalf("second holder got the lock: %v, %v", ok, err)
	}
	// A's writes carry its lease's token.
	oldTok := leaseA.Token()
	if _, err := a.SetPoint().Set(ctx, e2e.SetPoint{Celsius: 1, Mode: e2e.ModeHeat}); err != nil {
		t.Fatal(err)
	}
	if err := leaseA.Release(ctx); err != nil {
		t.Fatal(err)
	}
	leaseZ, err := z.Owner().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer leaseZ.Release(context.WithoutCancel(ctx))
	if leaseZ.Token().Compare(oldTok) <= 0 {
		t.Fatalf("new token %s not above the old %s", leaseZ.Token(), oldTok)
	}
	if _, err := z.SetPoint().Set(ctx, e2e.SetPoint{Celsius: 2, Mode: e2e.ModeCool}); err != nil {
		t.Fatal(err)
	}
	// The former holder, writing with its old token, is refused.
	_, err = a.SetPoint().Set(ctx, e2e.SetPoint{Celsius: 3, Mode: e2e.ModeOff}, runtime.WithFencingToken(oldTok))
	if !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
		t.Fatalf("stale write: %v, want ErrFencingTokenLowerVersion", err)
	}
	if e, err := z.SetPoint().Get(ctx); err != nil || e.Value.Celsius != 2 {
		t.Fatalf("value after the stale write: %+v, %v", e.Value, err)
	}
}
