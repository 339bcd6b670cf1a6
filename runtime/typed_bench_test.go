package runtime_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// typedBenchClient returns a client of an external server on mosquitto.
func typedBenchClient(b *testing.B) *runtime.Client {
	url := brokertest.Mosquitto(b)
	servertest.NewExternal(b, url, servertest.WithOptions(func(o *server.Options) {
		o.Logger = slog.New(slog.DiscardHandler) // keep benchmark output readable
	}))
	return dial(b, url)
}

// BenchmarkTypedSetGet is one typed Set and one typed Get of a msgpack
// struct: the round trips dominate, the codec's share shows in allocs.
func BenchmarkTypedSetGet(b *testing.B) {
	c := typedBenchClient(b)
	ctx := testCtx(b)
	k := runtime.NewKey[thermoSetPoint](c, []byte("sp"), codec.MsgPack[thermoSetPoint]{})
	v := thermoSetPoint{Celsius: 21.5, Mode: "heat", UpdatedBy: "bench"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Set(ctx, v); err != nil {
			b.Fatal(err)
		}
		if _, err := k.Get(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawSetGet is the same pair through the byte-level API.
func BenchmarkRawSetGet(b *testing.B) {
	c := typedBenchClient(b)
	ctx := testCtx(b)
	val, _ := codec.MsgPack[thermoSetPoint]{}.Encode(thermoSetPoint{Celsius: 21.5, Mode: "heat", UpdatedBy: "bench"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Set(ctx, []byte("sp"), val, runtime.SetOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Get(ctx, []byte("sp")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateUncontended is a guarded read-modify-write when nobody
// else wants the lock: acquire, GET, fenced SET, release (four round trips).
func BenchmarkUpdateUncontended(b *testing.B) {
	c := typedBenchClient(b)
	ctx := testCtx(b)
	lock := runtime.NewLock(c, []byte("n/lock"), 5*time.Second)
	k := runtime.NewKey[int](c, []byte("n"), codec.Int[int]{}, runtime.GuardedBy(lock))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 1, nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateWithHeldLease is the same while the client already holds
// the guard lease: GET and fenced SET only.
func BenchmarkUpdateWithHeldLease(b *testing.B) {
	c := typedBenchClient(b)
	ctx := testCtx(b)
	lock := runtime.NewLock(c, []byte("n/lock"), 5*time.Second)
	k := runtime.NewKey[int](c, []byte("n"), codec.Int[int]{}, runtime.GuardedBy(lock))
	le, err := lock.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer le.Release(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := k.Update(ctx, func(cur int, _ bool) (int, error) { return cur + 1, nil }); err != nil {
			b.Fatal(err)
		}
	}
}
