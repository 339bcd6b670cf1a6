package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server"
)

// SetPoint stands for a type generated from the schema.
type SetPoint struct {
	Celsius float64 `msgpack:"celsius"`
	Mode    string  `msgpack:"mode"`
}

// startExampleServer runs an embedded state store on a free loopback port.
func startExampleServer() *server.Server {
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	return srv
}

func dialExample(ctx context.Context, srv *server.Server) *runtime.Client {
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// A typed key as generated code builds it: the key name, a codec, and
// optionally a default TTL and a guard lock.
func ExampleNewKey() {
	srv := startExampleServer()
	defer srv.Close()
	ctx := context.Background()
	c := dialExample(ctx, srv)
	defer c.Close()

	sp := runtime.NewKey[SetPoint](c, []byte("thermostats/kitchen/setPoint"), codec.MsgPack[SetPoint]{})
	reading := runtime.NewKey[float64](c, []byte("thermostats/kitchen/reading"),
		codec.Float[float64]{}, runtime.DefaultTTL(30*time.Second))

	if _, err := sp.Get(ctx); errors.Is(err, runtime.ErrNotFound) {
		fmt.Println("no set point yet")
	}
	if _, err := sp.Set(ctx, SetPoint{Celsius: 21.5, Mode: "heat"}); err != nil {
		log.Fatal(err)
	}
	if _, err := reading.Set(ctx, 20.25); err != nil { // expires after 30 s
		log.Fatal(err)
	}
	e, err := sp.Get(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.1f °C (%s)\n", e.Value.Celsius, e.Value.Mode)
	// Output:
	// no set point yet
	// 21.5 °C (heat)
}

// Watch yields decoded values; a value that does not decode is reported
// and the watch goes on. (Compiled only: it waits for changes.)
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
	srv := startExampleServer()
	defer srv.Close()
	ctx := context.Background()
	c := dialExample(ctx, srv)
	defer c.Close()
	lock := runtime.NewLock(c, []byte("counters/visits/lock"), 5*time.Second)
	visits := runtime.NewKey[int64](c, []byte("counters/visits"), codec.Int[int64]{}, runtime.GuardedBy(lock))

	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := visits.Update(ctx, func(cur int64, found bool) (int64, error) {
				return cur + 1, nil // cur is 0 when the key did not exist
			})
			if err != nil {
				log.Fatal(err)
			}
		}()
	}
	wg.Wait()
	e, err := visits.Get(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("visits:", e.Value)
	// Output: visits: 3
}

// Leader election: the active instance holds the lease and fences its
// writes with it; a standby blocks in Acquire until the lease is released
// or expires.
func ExampleLock_Acquire() {
	srv := startExampleServer()
	defer srv.Close()
	ctx := context.Background()
	active, standby := dialExample(ctx, srv), dialExample(ctx, srv)
	defer active.Close()
	defer standby.Close()

	leaderKey := []byte("app/leader")
	config := runtime.NewKey[string](active, []byte("app/config"), codec.String[string]{},
		runtime.GuardedBy(runtime.NewLock(active, leaderKey, 10*time.Second)))

	lease, err := runtime.NewLock(active, leaderKey, 10*time.Second).Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Writes to guarded keys now carry lease.Token() as their fencing token.
	if _, err := config.Set(ctx, "written by the leader"); err != nil {
		log.Fatal(err)
	}

	_, ok, err := runtime.NewLock(standby, leaderKey, 10*time.Second).TryAcquire(ctx)
	fmt.Println("standby got the lock:", ok, err)

	stepDown := make(chan struct{})
	go func() {
		select {
		case <-lease.Lost():
			// Stop acting as the leader at once: writes through the lease
			// fail with ErrLeaseLost from now on.
			log.Printf("leadership lost: %v", lease.Err())
		case <-stepDown:
		}
	}()
	close(stepDown)
	if err := lease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	next, err := runtime.NewLock(standby, leaderKey, 10*time.Second).Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("standby is leader, token newer:", next.Token().Compare(lease.Token()) > 0)
	_ = next.Release(ctx)
	// Output:
	// standby got the lock: false <nil>
	// standby is leader, token newer: true
}
