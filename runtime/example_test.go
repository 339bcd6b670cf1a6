package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
)

// exampleServer starts a local state store for the examples: the embedded
// broker on a free loopback port.
func exampleServer() *server.Server {
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	return srv
}

func Example() {
	srv := exampleServer()
	defer srv.Close()
	ctx := context.Background()

	cfg, err := runtime.FromURL(srv.URL()) // or runtime.FromEnv() in a cluster
	if err != nil {
		log.Fatal(err)
	}
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Set(ctx, []byte("greeting"), []byte("hello"), runtime.SetOptions{TTL: time.Minute}); err != nil {
		log.Fatal(err)
	}
	v, _, err := c.Get(ctx, []byte("greeting"))
	fmt.Printf("%s %v\n", v, err)

	_, _, err = c.Get(ctx, []byte("nothing here"))
	fmt.Println(errors.Is(err, runtime.ErrNotFound))
	// Output:
	// hello <nil>
	// true
}

// A lock is a key set with NEX and a TTL; the version of that Set fences
// the keys the lock protects.
func ExampleClient_Set_fencing() {
	srv := exampleServer()
	defer srv.Close()
	ctx := context.Background()
	cfg, _ := runtime.FromURL(srv.URL())
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	token, err := c.Set(ctx, []byte("owner"), []byte(c.ClientID()), runtime.SetOptions{
		Condition: runtime.IfNotExistsOrEqual, TTL: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Set(ctx, []byte("setPoint"), []byte("21.5"), runtime.SetOptions{FencingToken: token})
	fmt.Println("fenced write:", err)

	_, err = c.Set(ctx, []byte("setPoint"), []byte("30"), runtime.SetOptions{})
	fmt.Println("unfenced write:", errors.Is(err, runtime.ErrFencingTokenRequired))

	released, _, err := c.VDel(ctx, []byte("owner"), []byte(c.ClientID()), runtime.DelOptions{})
	fmt.Println("released:", released, err)
	// Output:
	// fenced write: <nil>
	// unfenced write: true
	// released: true <nil>
}

func ExampleClient_Watch() {
	srv := exampleServer()
	defer srv.Close()
	cfg, _ := runtime.FromURL(srv.URL())
	c, err := runtime.Dial(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	// Current: the first event is the key's state once the watch is live.
	for ev, err := range c.WatchWith(ctx, []byte("door"), runtime.WatchOptions{Current: true}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Kind, string(ev.Value), ev.Found)
		switch ev.Kind {
		case runtime.EventResync: // live now: change the key
			go func() {
				_, _ = c.Set(ctx, []byte("door"), []byte("open"), runtime.SetOptions{})
				_, _, _ = c.Del(ctx, []byte("door"), runtime.DelOptions{})
			}()
		case runtime.EventDelete:
			stop()
		}
	}
	// Output:
	// Resync  false
	// Set open true
	// Delete  false
}
