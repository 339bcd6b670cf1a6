package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

// SetPoint stands for a type generated from the schema.
type SetPoint struct {
	Celsius float64 `msgpack:"celsius"`
	Mode    string  `msgpack:"mode"`
}

// These examples talk to a state store on localhost; they are compiled but
// not run by go test (the tests run the same flows against real servers).

// A typed key as generated code builds it: the key name, a codec, and
// optionally a default TTL and a guard lock.
func ExampleNewKey() {
	ctx := context.Background()
	c, err := runtime.Dial(ctx, runtime.Config{Host: "localhost", Port: 1883})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	owner := runtime.NewLock(c, []byte("thermostats/kitchen/owner"), 10*time.Second)
	sp := runtime.NewKey[SetPoint](c, []byte("thermostats/kitchen/setPoint"),
		codec.MsgPack[SetPoint]{}, runtime.GuardedBy(owner))
	reading := runtime.NewKey[float64](c, []byte("thermostats/kitchen/reading"),
		codec.Float[float64]{}, runtime.DefaultTTL(30*time.Second))

	if _, err := sp.Set(ctx, SetPoint{Celsius: 21.5, Mode: "heat"}); err != nil {
		log.Fatal(err)
	}
	if _, err := reading.Set(ctx, 20.25); err != nil { // expires after 30 s
		log.Fatal(err)
	}
	e, err := sp.Get(ctx)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		fmt.Println("no set point yet")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("%.1f °C (%s), version %s\n", e.Value.Celsius, e.Value.Mode, e.Version)
	}
}

// Watch yields decoded values; a value that does not decode is reported
// and the watch goes on.
func ExampleKey_Watch() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := runtime.Dial(ctx, runtime.Config{Host: "localhost", Port: 1883})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sp := runtime.NewKey[SetPoint](c, []byte("thermostats/kitchen/setPoint"), codec.MsgPack[SetPoint]{})

	for ev, err := range sp.Watch(ctx) {
		if err != nil {
			log.Print(err)
			continue
		}
		switch {
		case ev.Kind == runtime.EventSet, ev.Kind == runtime.EventResync && ev.Found:
			fmt.Println("now", ev.Value.Celsius)
		default:
			fmt.Println("set point removed")
		}
	}
}

// Update is a read-modify-write that no concurrent Update, in any client,
// can interleave with: it runs under the key's guard lock and writes with
// the lock's fencing token.
func ExampleKey_Update() {
	ctx := context.Background()
	c, err := runtime.Dial(ctx, runtime.Config{Host: "localhost", Port: 1883})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	lock := runtime.NewLock(c, []byte("counters/visits/lock"), 5*time.Second)
	visits := runtime.NewKey[int64](c, []byte("counters/visits"), codec.Int[int64]{}, runtime.GuardedBy(lock))

	err = visits.Update(ctx, func(cur int64, found bool) (int64, error) {
		return cur + 1, nil // cur is 0 when the key did not exist
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Leader election: the active instance holds the lease and fences its
// writes with it; a standby blocks in Acquire until the lease is released
// or expires.
func ExampleLock_Acquire() {
	ctx := context.Background()
	c, err := runtime.Dial(ctx, runtime.Config{Host: "localhost", Port: 1883})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	leader := runtime.NewLock(c, []byte("app/leader"), 10*time.Second)
	config := runtime.NewKey[string](c, []byte("app/config"), codec.String[string]{}, runtime.GuardedBy(leader))

	lease, err := leader.Acquire(ctx) // renews itself until Release or ctx ends
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.Background())

	// Writes to guarded keys now carry lease.Token() as their fencing token.
	if _, err := config.Set(ctx, "written by the leader"); err != nil {
		log.Fatal(err)
	}

	select {
	case <-lease.Lost():
		// Stop acting as the leader at once: writes through the lease fail
		// with ErrLeaseLost from now on.
		log.Printf("leadership lost: %v", lease.Err())
	case <-ctx.Done():
	}
}
