package server

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// counters are the embedded broker's refusal and limit counters behind
// Server.Stats.
type counters struct {
	acceptErrors    atomic.Int64
	refused         atomic.Int64 // connections over a connection limit (0x97 or closed at accept)
	connectTimeouts atomic.Int64
	connectTooLarge atomic.Int64
	outputKicks     atomic.Int64
	sessionsEvicted atomic.Int64
	sessionsExpired atomic.Int64 // expired sessions whose subscriptions and messages were freed
}

type admission int

const (
	admitOK     admission = iota
	admitRefuse           // over a limit: read CONNECT and answer CONNACK 0x97
	admitClose            // over a limit by more than the refusal margin: close at once
)

// connLimits counts open connections, in total and per remote address.
//
// A connection over a limit is still read up to its CONNECT (bounded in
// time and bytes like any other) so that it can be answered CONNACK 0x97,
// Quota exceeded: a client then knows it was refused and why, instead of
// seeing its connection reset. Answering costs a socket, a goroutine and
// at most MaxConnectBytes for at most ConnectTimeout, so only a margin of
// such connections is answered (a tenth of the limit, at least one); past
// it connections are closed as soon as they are accepted, which costs
// nothing. Open connections therefore never exceed a limit by more than
// its margin.
type connLimits struct {
	maxConns, maxPerIP  int
	connsSlack, ipSlack int
	connectTimeout      time.Duration
	maxConnectBytes     int
	log                 logLimiter // refusals, rate-limited
	mu                  sync.Mutex
	open                int
	perIP               map[netip.Addr]int
}

func newConnLimits(l Limits) *connLimits {
	c := &connLimits{
		maxConns:        l.maxConnections(),
		connectTimeout:  l.connectTimeout(),
		maxConnectBytes: l.maxConnectBytes(),
		log:             logLimiter{every: 10 * time.Second},
		perIP:           map[netip.Addr]int{},
	}
	c.maxPerIP = l.maxConnectionsPerIP(c.maxConns)
	c.connsSlack = max(1, c.maxConns/10)
	c.ipSlack = max(1, c.maxPerIP/10)
	return c
}

// acquire counts a new connection from ip and says what to do with it.
// Every acquire is matched by one release.
func (c *connLimits) acquire(ip netip.Addr) admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open++
	c.perIP[ip]++
	n, m := c.open, c.perIP[ip]
	switch {
	case n > c.maxConns+c.connsSlack || m > c.maxPerIP+c.ipSlack:
		return admitClose
	case n > c.maxConns || m > c.maxPerIP:
		return admitRefuse
	}
	return admitOK
}

func (c *connLimits) release(ip netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if c.perIP[ip]--; c.perIP[ip] <= 0 {
		delete(c.perIP, ip)
	}
}

// openConns is the number of open connections.
func (c *connLimits) openConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// errConnectTooLarge ends a connection whose first packet declares more
// bytes than Limits.MaxConnectBytes.
var errConnectTooLarge = errors.New("CONNECT packet larger than the limit")

// firstPacket watches the bytes of a connection's first packet go by,
// before mochi sees them. mochi reads a packet's fixed header and then
// allocates and reads the whole body, MaxPacketBytes (64 MiB) for a
// CONNECT as for any packet; before CONNECT nobody is authenticated, so
// the first packet gets a much smaller bound, checked on its fixed header:
// a larger CONNECT ends the connection before a byte of its body is
// buffered. A first packet that is not a CONNECT, or whose length is
// malformed, is left to mochi, which refuses it. Only the first packet is
// looked at; used by one reading goroutine at a time.
type firstPacket struct {
	limit  int
	stats  *counters
	header int // fixed header bytes seen
	length int // remaining length decoded so far
	shift  uint
	left   int // body bytes of the first packet still to pass
	done   bool
	failed bool
	logged bool
}

// see inspects p, the next bytes read from the connection, and returns
// errConnectTooLarge (again on every later call) once the first packet is
// known to be too large.
func (f *firstPacket) see(p []byte) error {
	if f.failed {
		return errConnectTooLarge
	}
	for len(p) > 0 && !f.done {
		if f.left > 0 {
			k := min(f.left, len(p))
			f.left -= k
			p = p[k:]
			if f.left == 0 {
				f.done = true
			}
			continue
		}
		b := p[0]
		p = p[1:]
		f.header++
		if f.header == 1 {
			if b>>4 != 1 { // not CONNECT: mochi refuses it after its header
				f.done = true
			}
			continue
		}
		f.length |= int(b&0x7f) << f.shift
		f.shift += 7
		if b&0x80 != 0 {
			if f.header == 5 { // a fifth length byte: malformed, mochi refuses it
				f.done = true
			}
			continue
		}
		if f.limit > 0 && f.header+f.length > f.limit {
			f.failed = true
			if f.stats != nil {
				f.stats.connectTooLarge.Add(1)
			}
			return errConnectTooLarge
		}
		f.left = f.length
		if f.left == 0 {
			f.done = true
		}
	}
	return nil
}
