package server

import (
	"net"
	"sync"
	"time"
)

// acceptTracker wraps the embedded broker's net.Listener so that Close can
// wait for mochi to register every connection it accepted before it waits
// for them all to end. mochi v2.7.9 counts a connection (ClientsWg.Add) in
// the goroutine that serves it, which can run after Close has started
// ClientsWg.Wait: a data race, and a Close that may return while that
// connection is still being set up. mochi adds before its first Read of
// the connection, so a connection that has been read from, or closed, is
// counted.
type acceptTracker struct {
	net.Listener
	mu      sync.Mutex
	pending map[*trackedConn]struct{}
	settled chan struct{} // closed and replaced whenever pending empties
}

func newAcceptTracker(l net.Listener) *acceptTracker {
	return &acceptTracker{Listener: l, pending: map[*trackedConn]struct{}{}, settled: make(chan struct{})}
}

func (a *acceptTracker) Accept() (net.Conn, error) {
	c, err := a.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, a: a, gate: newReadGate()}
	a.mu.Lock()
	a.pending[tc] = struct{}{}
	a.mu.Unlock()
	return tc, nil
}

func (a *acceptTracker) done(tc *trackedConn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[tc]; !ok {
		return
	}
	delete(a.pending, tc)
	if len(a.pending) == 0 {
		close(a.settled)
		a.settled = make(chan struct{})
	}
}

// stop closes the listener, so nothing more is accepted, and waits (at
// most limit) until every accepted connection has been taken up.
func (a *acceptTracker) stop(limit time.Duration) {
	_ = a.Listener.Close()
	deadline := time.After(limit)
	for {
		a.mu.Lock()
		if len(a.pending) == 0 {
			a.mu.Unlock()
			return
		}
		settled := a.settled
		a.mu.Unlock()
		select {
		case <-settled:
		case <-deadline:
			return
		}
	}
}

// trackedConn reports its first Read or its Close to the tracker, and
// carries the connection's read gate (readgate.go).
type trackedConn struct {
	net.Conn
	a    *acceptTracker
	once sync.Once
	gate *readGate
}

func (c *trackedConn) Read(p []byte) (int, error) {
	c.once.Do(func() { c.a.done(c) })
	return c.Conn.Read(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.a.done(c) })
	c.gate.close()
	return c.Conn.Close()
}
