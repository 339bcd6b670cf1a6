package runtime_test

import (
	"errors"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

type thermoMode string

type thermoSetPoint struct {
	Celsius   float64        `msgpack:"celsius" json:"celsius"`
	Mode      thermoMode     `msgpack:"mode" json:"mode"`
	UpdatedBy string         `msgpack:"updatedBy,omitempty" json:"updatedBy,omitempty"`
	Zones     map[string]int `msgpack:"zones,omitempty" json:"zones,omitempty"`
}

// roundTripKey sets v through a typed key, reads it back, and checks the
// stored bytes are the codec's encoding.
func roundTripKey[T any](t *testing.T, c *runtime.Client, name string, cdc codec.Codec[T], v T, eq func(a, b T) bool) {
	t.Helper()
	ctx := testCtx(t)
	k := runtime.NewKey(c, []byte(name), cdc)
	ver, err := k.Set(ctx, v)
	if err != nil {
		t.Fatalf("%s: Set: %v", name, err)
	}
	e, err := k.Get(ctx)
	if err != nil {
		t.Fatalf("%s: Get: %v", name, err)
	}
	if !eq(e.Value, v) || e.Version.Compare(ver) != 0 {
		t.Fatalf("%s: Get = %v @%s, want %v @%s", name, e.Value, e.Version, v, ver)
	}
	raw, _, err := c.Get(ctx, []byte(name))
	want, _ := cdc.Encode(v)
	if err != nil || string(raw) != string(want) {
		t.Fatalf("%s: stored %q (%v), want %q", name, raw, err, want)
	}
}

func same[T any](a, b T) bool { return reflect.DeepEqual(a, b) }

func TestKeySetGetRoundTripsWithEveryCodec(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		sp := thermoSetPoint{Celsius: 21.5, Mode: "heat", Zones: map[string]int{"b": 2, "a": 1}}
		roundTripKey[thermoSetPoint](t, c, "sp/msgpack", codec.MsgPack[thermoSetPoint]{}, sp, same)
		roundTripKey[thermoSetPoint](t, c, "sp/json", codec.JSON[thermoSetPoint]{}, sp, same)
		roundTripKey[thermoMode](t, c, "mode", codec.String[thermoMode]{}, "cool", same)
		roundTripKey[[]byte](t, c, "raw", codec.Bytes{}, []byte{0, 1, '\r', '\n'}, same)
		roundTripKey[[]byte](t, c, "empty", codec.Bytes{}, []byte{}, same)
		roundTripKey[bool](t, c, "on", codec.Bool[bool]{}, true, same)
		roundTripKey[int64](t, c, "count", codec.Int[int64]{}, math.MinInt64, same)
		roundTripKey[uint64](t, c, "big", codec.Uint[uint64]{}, math.MaxUint64, same)
		roundTripKey[float64](t, c, "reading", codec.Float[float64]{}, 21.25, same)
		roundTripKey[time.Time](t, c, "at", codec.Time{},
			time.Date(2026, 11, 22, 2, 17, 56, 123456789, time.UTC), time.Time.Equal)
		roundTripKey[time.Duration](t, c, "every", codec.Duration{}, 90*time.Second, same)
		roundTripKey[netip.Addr](t, c, "addr", codec.Text[netip.Addr, *netip.Addr]{},
			netip.MustParseAddr("2001:db8::1"), same)
	})
}

func TestKeyGetMissingAndUndecodable(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[int](c, []byte("n"), codec.Int[int]{})
		if _, err := k.Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
		}
		ver, err := c.Set(ctx, []byte("n"), []byte("twelve"), runtime.SetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := k.Get(ctx)
		var de *codec.DecodeError
		if !errors.As(err, &de) || de.Codec != "int" {
			t.Fatalf("Get of an undecodable value: %v, want a *codec.DecodeError", err)
		}
		if e.Version.Compare(ver) != 0 {
			t.Fatalf("Entry.Version %s with a decode error, want %s", e.Version, ver)
		}
	})
}

func TestKeyDefaultTTLAppliesToEverySetUnlessOverridden(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clock := engine.NewFakeClock(time.Now())
			env := b.start(t, servertest.WithOptions(func(o *server.Options) { o.Now = clock.Now }))
			c := dial(t, env.url)
			ctx := testCtx(t)
			ttl := 300 * time.Millisecond
			mk := func(name string) *runtime.Key[string] {
				return runtime.NewKey[string](c, []byte(name), codec.String[string]{}, runtime.DefaultTTL(ttl))
			}
			def, forever, longer := mk("default"), mk("forever"), mk("longer")
			if _, err := def.Set(ctx, "v"); err != nil {
				t.Fatal(err)
			}
			if _, err := forever.Set(ctx, "v", runtime.WithoutTTL()); err != nil {
				t.Fatal(err)
			}
			if _, err := longer.Set(ctx, "v", runtime.WithTTL(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if ok, _, err := mk("absent").SetIfAbsent(ctx, "v"); !ok || err != nil {
				t.Fatalf("SetIfAbsent on an absent key: %v, %v", ok, err)
			}
			clock.Advance(ttl + time.Millisecond)
			env.srv.Engine().Expire()
			for _, k := range []*runtime.Key[string]{def, mk("absent")} {
				if _, err := k.Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
					t.Errorf("%s after its default TTL: %v, want ErrNotFound", k.Name(), err)
				}
			}
			for _, k := range []*runtime.Key[string]{forever, longer} {
				if _, err := k.Get(ctx); err != nil {
					t.Errorf("%s after the default TTL: %v, want it kept", k.Name(), err)
				}
			}
			if _, err := def.Set(ctx, "v", runtime.WithTTL(-time.Second)); !errors.Is(err, runtime.ErrInvalidArgument) {
				t.Errorf("negative TTL: %v, want ErrInvalidArgument", err)
			}
		})
	}
}

func TestKeyConditionalWrites(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[thermoSetPoint](c, []byte("sp"), codec.MsgPack[thermoSetPoint]{})
		a := thermoSetPoint{Celsius: 20, Mode: "heat", Zones: map[string]int{"x": 1, "y": 2, "z": 3}}
		b := thermoSetPoint{Celsius: 18, Mode: "cool"}

		if ok, ver, err := k.SetIfAbsent(ctx, a); !ok || err != nil || ver.IsZero() {
			t.Fatalf("SetIfAbsent on absent key: %v %s %v", ok, ver, err)
		}
		if ok, _, err := k.SetIfAbsent(ctx, b); ok || err != nil {
			t.Fatalf("SetIfAbsent on present key: %v %v, want false, nil", ok, err)
		}
		if ok, err := k.DeleteIfEqual(ctx, b); ok || err != nil {
			t.Fatalf("DeleteIfEqual with another value: %v %v, want false, nil", ok, err)
		}
		// A freshly built equal value (its map iterates in another order)
		// must still compare equal on the server.
		again := thermoSetPoint{Celsius: 20, Mode: "heat", Zones: map[string]int{"z": 3, "y": 2, "x": 1}}
		if ok, err := k.DeleteIfEqual(ctx, again); !ok || err != nil {
			t.Fatalf("DeleteIfEqual with an equal value: %v %v, want true, nil", ok, err)
		}
		if ok, err := k.DeleteIfEqual(ctx, a); ok || err != nil {
			t.Fatalf("DeleteIfEqual on absent key: %v %v, want false, nil", ok, err)
		}
		if _, err := k.Set(ctx, b); err != nil {
			t.Fatal(err)
		}
		if ok, err := k.Delete(ctx); !ok || err != nil {
			t.Fatalf("Delete: %v %v", ok, err)
		}
		if ok, err := k.Delete(ctx); ok || err != nil {
			t.Fatalf("Delete of absent key: %v %v, want false, nil", ok, err)
		}
	})
}

func TestKeyWatchYieldsTypedEventsAndSurvivesDecodeErrors(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[thermoSetPoint](c, []byte("sp"), codec.MsgPack[thermoSetPoint]{})

		type item struct {
			ev  runtime.KeyEvent[thermoSetPoint]
			err error
		}
		events := make(chan item, 64)
		go func() {
			for ev, err := range k.Watch(ctx) {
				events <- item{ev, err}
			}
			close(events)
		}()
		// The registration is made when iteration starts; write a marker
		// until the watcher sees one, so nothing after it can be missed.
		marker := thermoSetPoint{Mode: "marker"}
		sync := time.NewTicker(20 * time.Millisecond)
		defer sync.Stop()
	wait:
		for {
			if _, err := k.Set(ctx, marker); err != nil {
				t.Fatal(err)
			}
			select {
			case it := <-events:
				if it.err == nil && it.ev.Value.Mode == "marker" {
					break wait
				}
			case <-sync.C:
			case <-ctx.Done():
				t.Fatal("watcher never saw the marker")
			}
		}

		v1 := thermoSetPoint{Celsius: 21, Mode: "heat"}
		v2 := thermoSetPoint{Celsius: 19, Mode: "off"}
		if _, err := k.Set(ctx, v1); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte("sp"), []byte{0xc1}, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		ver2, err := k.Set(ctx, v2)
		if err != nil {
			t.Fatal(err)
		}

		var got []string
		for {
			it := receive(t, "watch event", events)
			if it.err == nil && it.ev.Value.Mode == "marker" {
				continue // a late notification of the marker writes
			}
			switch {
			case it.err != nil:
				var de *codec.DecodeError
				if !errors.As(it.err, &de) || it.ev.Kind != runtime.EventSet {
					t.Fatalf("watch error %v (event %+v), want a decode error on a Set", it.err, it.ev)
				}
				got = append(got, "decode-error")
			case it.ev.Kind == runtime.EventSet:
				got = append(got, "set:"+string(it.ev.Value.Mode))
			case it.ev.Kind == runtime.EventDelete:
				if it.ev.Found {
					t.Fatalf("delete event with Found")
				}
				got = append(got, "delete")
			default:
				got = append(got, it.ev.Kind.String())
			}
			if it.err == nil && it.ev.Value.Mode == v2.Mode {
				if it.ev.Version.Compare(ver2) != 0 {
					t.Fatalf("event version %s, want %s", it.ev.Version, ver2)
				}
				break
			}
		}
		want := []string{"set:heat", "delete", "decode-error", "set:off"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
}

func TestKeyWatchWithCurrentStartsFromTheDecodedValue(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, writer := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[thermoSetPoint](c, []byte("sp"), codec.MsgPack[thermoSetPoint]{})
		w := runtime.NewKey[thermoSetPoint](writer, []byte("sp"), codec.MsgPack[thermoSetPoint]{})

		// Absent: a Resync without a value, then the first write, missed by
		// no gap (the Resync is read once the registration is live).
		n := 0
		for ev, err := range k.WatchWith(ctx, runtime.WatchOptions{Current: true, Buffer: 4}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if n == 1 {
				if ev.Kind != runtime.EventResync || ev.Found || !reflect.DeepEqual(ev.Value, thermoSetPoint{}) {
					t.Fatalf("first event %+v, want a Resync of nothing", ev)
				}
				if _, err := w.Set(ctx, thermoSetPoint{Celsius: 20, Mode: "heat"}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if ev.Kind != runtime.EventSet || ev.Value.Mode != "heat" {
				t.Fatalf("second event %+v, want the Set", ev)
			}
			break
		}
		// Present: the Resync carries the decoded value and its version.
		e, err := k.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for ev, err := range k.WatchWith(ctx, runtime.WatchOptions{Current: true}) {
			if err != nil || ev.Kind != runtime.EventResync || !ev.Found || !reflect.DeepEqual(ev.Value, e.Value) || ev.Version != e.Version {
				t.Fatalf("first event %+v, %v; want a Resync of %+v at %s", ev, err, e.Value, e.Version)
			}
			break
		}
		// Undecodable: the Resync comes as a decode error, and the watch
		// goes on.
		if _, err := writer.Set(ctx, []byte("sp"), []byte{0xc1}, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		for ev, err := range k.WatchWith(ctx, runtime.WatchOptions{Current: true}) {
			var de *codec.DecodeError
			if !errors.As(err, &de) || ev.Kind != runtime.EventResync || !ev.Found {
				t.Fatalf("first event %+v, %v; want a Resync with a decode error", ev, err)
			}
			break
		}
	})
}

func TestWithPersistKeepsOneWriteOnDisk(t *testing.T) {
	srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) { o.DataDir = t.TempDir() }))
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	durable := func(name string) bool {
		t.Helper()
		e, ok := srv.Engine().Lookup([]byte(name))
		if !ok {
			t.Fatalf("%s is missing", name)
		}
		return e.Durable
	}
	k := runtime.NewKey[int](c, []byte("n"), codec.Int[int]{})
	if _, err := k.Set(ctx, 1, runtime.WithPersist()); err != nil {
		t.Fatal(err)
	}
	if !durable("n") {
		t.Fatal("a Set with WithPersist left the key memory-only")
	}
	// Only that write asked: the next one, without it, makes the key
	// memory-only again.
	if _, err := k.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if durable("n") {
		t.Fatal("a Set without WithPersist kept the key on disk")
	}
	// PersistWrites asks for every write of its key.
	kept := runtime.NewKey[int](c, []byte("kept"), codec.Int[int]{}, runtime.PersistWrites())
	if _, err := kept.Set(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if !durable("kept") {
		t.Fatal("a Set of a PersistWrites key left it memory-only")
	}
}
