package engine_test

import (
	"fmt"
	"time"

	"github.com/ssgen/ssgen/server/engine"
)

func cmd(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// The public article's example: the engine's clock and the client's agree,
// so the version is the request's __ts with the counter incremented. The
// watching client hears about the change, then about the expiry.
func ExampleEngine() {
	clock := engine.NewFakeClock(time.UnixMilli(1696374425000))
	e := engine.New(engine.Config{
		Now: clock.Now,
		OnNotify: func(n engine.Notification) {
			fmt.Printf("notify %s of %s: %q\n", n.Client, n.Key, n.Payload)
		},
	})
	e.Handle(engine.Request{Args: cmd("KEYNOTIFY", "keyName"), Client: "Client2"})

	res := e.Handle(engine.Request{
		Args:   cmd("SET", "keyName", "value", "PX", "1000"),
		Client: "Client1", Timestamp: "1696374425000:0:Client1", HasTimestamp: true,
	})
	fmt.Printf("%q __ts=%s\n", res.Payload, res.Version)

	res = e.Handle(engine.Request{Args: cmd("GET", "keyName"), Client: "Client1"})
	fmt.Printf("%q __ts=%s\n", res.Payload, res.Version)

	clock.Advance(time.Second)
	_, pending := e.Expire()
	fmt.Println("deadlines left:", pending)
	// Output:
	// notify Client2 of keyName: "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$5\r\nvalue\r\n"
	// "+OK\r\n" __ts=001696374425000:00001:StateStore
	// "$5\r\nvalue\r\n" __ts=001696374425000:00001:StateStore
	// notify Client2 of keyName: "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"
	// deadlines left: false
}
