package mochiclose_test

import (
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/mochiclose"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
)

// connect is an MQTT 5 CONNECT with a clean start and client id c.
var connect = []byte{0x10, 14, 0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 60, 0, 0, 1, 'c'}

// TestCloseWhileClientsDisconnect closes a server while its clients end
// their connections, the shutdown of mochi v2.7.9 that deadlocks: a client
// removing itself from the client map (write lock) between Server.Close's
// two read locks of that map. Which interleaving a round gets is up to the
// scheduler, so the test runs many rounds, each client dropping its
// connection at a different point; every Close must return. (With mochi's
// own Close, about half the runs of this test hang in one of the rounds.)
func TestCloseWhileClientsDisconnect(t *testing.T) {
	const clients = 8
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	for round := range rounds {
		srv := mqtt.New(&mqtt.Options{Logger: slog.New(slog.DiscardHandler), InlineClient: true})
		if err := srv.AddHook(new(allowAll), nil); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddListener(listeners.NewTCP(listeners.Config{ID: "tcp", Address: "127.0.0.1:0"})); err != nil {
			t.Fatal(err)
		}
		if err := srv.Serve(); err != nil {
			t.Fatal(err)
		}
		l, _ := srv.Listeners.Get("tcp")
		conns := make([]net.Conn, clients)
		for i := range conns {
			c, err := net.Dial("tcp", l.Address())
			if err != nil {
				t.Fatal(err)
			}
			id := append([]byte(nil), connect...)
			id[len(id)-1] = byte('a' + i)
			if _, err := c.Write(id); err != nil {
				t.Fatal(err)
			}
			connack := make([]byte, 2)
			if _, err := io.ReadFull(c, connack); err != nil || connack[0] != 0x20 {
				t.Fatalf("round %d: no CONNACK: % x %v", round, connack, err)
			}
			conns[i] = c
		}
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range i * (round % 7) {
					runtime.Gosched()
				}
				_ = c.Close()
			}()
		}
		done := make(chan error, 1)
		go func() { done <- mochiclose.Close(srv) }()
		testwait.Until(t, 20*time.Second, "Close to return (deadlocked?)", func() bool {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				return true
			default:
				return false
			}
		})
		wg.Wait()
	}
}

// allowAll admits every client (mochi's AllowHook package drags in a YAML
// library).
type allowAll struct{ mqtt.HookBase }

func (allowAll) ID() string { return "allow-all" }

func (allowAll) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (allowAll) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (allowAll) OnACLCheck(*mqtt.Client, string, bool) bool { return true }
