package server

import (
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// readGate works around a deadlock in mochi v2.7.9 (docs/reliability.md,
// "Known upstream issues"). After each packet a client sends, its read
// goroutine calls Inflight.NextImmediate, which takes the client's in-flight
// read lock and then takes it again in GetAll. If another goroutine calls
// Inflight.Set for that client in between (a notification being
// delivered), the writer waits for the first read lock and the second read
// lock waits for the writer: the client's connection stops for good.
//
// The stretch runs from the OnPacketProcessed hook to the read loop's next
// SetDeadline on the connection, both in the read goroutine. The gate keeps
// the read goroutine out of that stretch while a notification is being
// handed to the same client, and the notification out while the read
// goroutine is in it. Closing the connection opens the gate for good.
type readGate struct {
	mu      sync.Mutex
	changed *sync.Cond
	reading bool // the read goroutine is in the stretch
	passing int  // notifications being handed over
	closed  bool
}

func newReadGate() *readGate {
	g := &readGate{}
	g.changed = sync.NewCond(&g.mu)
	return g
}

// enter marks the read goroutine in the stretch, once no notification is
// being handed over.
func (g *readGate) enter() {
	g.mu.Lock()
	for g.passing > 0 && !g.closed {
		g.changed.Wait()
	}
	g.reading = !g.closed
	g.mu.Unlock()
}

// leave marks the read goroutine out of the stretch; harmless when it was
// not in it.
func (g *readGate) leave() {
	g.mu.Lock()
	if g.reading {
		g.reading = false
		g.changed.Broadcast()
	}
	g.mu.Unlock()
}

// close opens the gate for good: nothing reads from a closed connection.
func (g *readGate) close() {
	g.mu.Lock()
	g.closed, g.reading = true, false
	g.changed.Broadcast()
	g.mu.Unlock()
}

// pass runs deliver once the read goroutine is out of the stretch,
// keeping it out until deliver returns.
func (g *readGate) pass(deliver func()) {
	g.mu.Lock()
	for g.reading {
		g.changed.Wait()
	}
	g.passing++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if g.passing--; g.passing == 0 {
			g.changed.Broadcast()
		}
		g.mu.Unlock()
	}()
	deliver()
}

// gateOf is the read gate of cl's network connection, nil for the inline
// client and for connections not accepted through the tracker.
func gateOf(cl *mqtt.Client) *readGate {
	if tc := netConnOf(cl.Net.Conn); tc != nil {
		return tc.gate
	}
	return nil
}

// SetDeadline is the read loop's first step for every packet, after the
// previous one has been processed: the read goroutine has left the stretch.
// mochi's first call, once CONNECT has been read and checked, also
// replaces the CONNECT deadline set at accept (embedded_listener.go).
func (c *trackedConn) SetDeadline(t time.Time) error {
	c.gate.leave()
	c.connected.Store(true)
	return c.Conn.SetDeadline(c.clamp(t))
}
