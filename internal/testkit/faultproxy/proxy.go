// Package faultproxy is a TCP proxy for fault tests: it forwards loopback
// connections to a target and, on command, delays their bytes, swallows
// them (a black hole: the connection stays open but nothing gets through,
// as when a network partition leaves both ends unaware), refuses new
// connections, or cuts the live ones.
//
// It exists so that the runtime's reaction to a bad network can be tested
// against the real server without touching either: the runtime dials the
// proxy's address instead of the server's.
package faultproxy

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards every connection accepted on Addr to the target.
type Proxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	links  map[*link]struct{}
	delay  time.Duration
	hole   bool // swallow both directions
	mute   bool // swallow target-to-client bytes only
	refuse bool
	closed bool

	accepted atomic.Int64
	dropped  atomic.Int64
	wg       sync.WaitGroup
}

// link is one proxied connection: the client's side and the target's.
type link struct {
	client, server net.Conn
	once           sync.Once
	// holed is set when bytes of this link were swallowed: its MQTT
	// stream is corrupt, so it must not carry traffic again.
	holed atomic.Bool
}

func (l *link) close() {
	l.once.Do(func() {
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

// New listens on 127.0.0.1:0 and forwards to target (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, links: make(map[*link]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Start is New for a test: it fails the test on error and closes the
// proxy when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port, to dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted counts the connections accepted so far, refused ones included:
// it is the number of connection attempts a client made.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Swallowed counts the bytes dropped by Blackhole and SwallowReplies.
func (p *Proxy) Swallowed() int64 { return p.dropped.Load() }

// Live is the number of connections being forwarded now.
func (p *Proxy) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// SetDelay holds every chunk of bytes, in both directions, for d before
// forwarding it (order is kept). Zero forwards at once.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Refuse makes the proxy close new connections as soon as they are
// accepted (the target looks down), or accept them again.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}

// Blackhole swallows every byte of the live connections and of new ones,
// in both directions, without closing anything.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.hole = true
	p.mu.Unlock()
}

// SwallowReplies swallows the bytes the target sends, in the live
// connections and new ones, while the client's bytes still get through:
// requests arrive and are acted on, their answers and acknowledgements are
// lost. Restore ends it.
func (p *Proxy) SwallowReplies() {
	p.mu.Lock()
	p.mute = true
	p.mu.Unlock()
}

// Restore ends Blackhole and SwallowReplies. Connections that lost bytes are cut, since their
// streams can no longer be parsed; the client's reconnect then gets
// through.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.hole, p.mute = false, false
	var bad []*link
	for l := range p.links {
		if l.holed.Load() {
			bad = append(bad, l)
		}
	}
	p.mu.Unlock()
	for _, l := range bad {
		p.cut(l)
	}
}

// Cut closes every live connection at once, both sides, as a network
// failure or a crashed peer would. New connections are still accepted.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	all := make([]*link, 0, len(p.links))
	for l := range p.links {
		all = append(all, l)
	}
	p.mu.Unlock()
	for _, l := range all {
		p.cut(l)
	}
	return len(all)
}

func (p *Proxy) cut(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	l.close()
}

// Close stops accepting, cuts every connection and waits for the proxy's
// goroutines to end. It is safe to call more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	p.mu.Unlock()
	if !already {
		_ = p.ln.Close()
	}
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.accepted.Add(1)
		p.mu.Lock()
		refuse, closed := p.refuse, p.closed
		p.mu.Unlock()
		if refuse || closed {
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.open(c)
	}
}

// open dials the target for an accepted connection and starts the pumps.
func (p *Proxy) open(c net.Conn) {
	defer p.wg.Done()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close() // the target is down: so is the proxy, as seen by the client
		return
	}
	setNoDelay(c)
	setNoDelay(s)
	l := &link{client: c, server: s}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()
	p.wg.Add(2)
	go p.pump(l, c, s, false)
	go p.pump(l, s, c, true)
}

func setNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
}

// pump copies src to dst chunk by chunk, applying the faults in force when
// each chunk arrives. Either side failing ends the whole link.
func (p *Proxy) pump(l *link, src, dst net.Conn, fromTarget bool) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
		l.close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hole, delay := p.hole || (fromTarget && p.mute), p.delay
			p.mu.Unlock()
			switch {
			case hole:
				l.holed.Store(true)
				p.dropped.Add(int64(n))
			default:
				if delay > 0 {
					time.Sleep(delay)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil { // EOF or a cut: either way the link is over
			return
		}
	}
}
