package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/server/access"
)

// Accept back-off after an error that is not a closed listener, as
// net/http does: running out of file descriptors (EMFILE, ENFILE) or a
// connection aborted before it was accepted must not end the accept loop,
// and retrying at once would spin.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// acceptTracker wraps the embedded broker's net.Listener. It is where a
// connection is admitted:
//
//   - Accept never returns an error but a closed listener's: mochi
//     v2.7.9's accept loop returns on any error, so one EMFILE would stop
//     the server for good. Other errors are logged (rate-limited) and
//     retried after a back-off.
//   - Connections are counted, in total and per remote address, and those
//     over a limit are marked for refusal or closed at once (connLimits).
//   - Each connection gets the CONNECT deadline and the first-packet size
//     check (trackedConn).
//
// It also lets Close wait for mochi to register every connection it
// accepted before it waits for them all to end. mochi counts a connection
// (ClientsWg.Add) in the goroutine that serves it, which can run after
// Close has started ClientsWg.Wait: a data race, and a Close that may
// return while that connection is still being set up. mochi adds before
// its first Read of the connection, so a connection that has been read
// from, or closed, is counted.
type acceptTracker struct {
	net.Listener
	lim   *connLimits
	stats *counters
	log   *slog.Logger
	tls   *tls.Config // set: connections are served over TLS (see tlsConn)
	// sleep waits d, or less when stopped closes; tests replace it.
	sleep  func(d time.Duration, stopped <-chan struct{})
	errLog logLimiter
	// closeLog limits the lines for connections closed before CONNECT (no
	// CONNECT in time, a first packet too large): a flood of them is one
	// line per period.
	closeLog logLimiter
	stopped  chan struct{}
	stopMu   sync.Once

	mu      sync.Mutex
	pending map[*trackedConn]struct{}
	settled chan struct{} // closed and replaced whenever pending empties
}

func newAcceptTracker(l net.Listener, lim *connLimits, stats *counters, log *slog.Logger) *acceptTracker {
	if lim == nil {
		lim = newConnLimits(Limits{})
	}
	if stats == nil {
		stats = &counters{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &acceptTracker{
		Listener: l, lim: lim, stats: stats, log: log,
		sleep:    sleepUnlessStopped,
		errLog:   logLimiter{every: 10 * time.Second},
		closeLog: logLimiter{every: 10 * time.Second},
		stopped:  make(chan struct{}),
		pending:  map[*trackedConn]struct{}{},
		settled:  make(chan struct{}),
	}
}

// nextAcceptBackoff doubles the previous delay, from acceptBackoffMin up
// to acceptBackoffMax.
func nextAcceptBackoff(d time.Duration) time.Duration {
	return min(max(2*d, acceptBackoffMin), acceptBackoffMax)
}

func sleepUnlessStopped(d time.Duration, stopped <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stopped:
	}
}

// Accept returns the next admitted connection. It returns an error only
// once the listener is closed.
func (a *acceptTracker) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := a.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || a.isStopped() {
				return nil, err
			}
			delay = nextAcceptBackoff(delay)
			a.stats.acceptErrors.Add(1)
			if ok, skipped := a.errLog.allow(time.Now()); ok {
				a.log.Error("accept failed; retrying", "error", err, "retry_in", delay, "similar_errors_not_logged", skipped)
			}
			a.sleep(delay, a.stopped)
			continue
		}
		delay = 0
		if tc := a.admit(c); tc != nil {
			if a.tls != nil {
				return &tlsConn{Conn: tls.Server(tc, a.tls), tc: tc}, nil
			}
			return tc, nil
		}
	}
}

// admit counts c and wraps it, or closes it and returns nil when it is
// over a hard connection limit.
func (a *acceptTracker) admit(c net.Conn) *trackedConn {
	ip := remoteIP(c)
	verdict := a.lim.acquire(ip)
	if verdict == admitClose {
		a.stats.refused.Add(1)
		if ok, skipped := a.lim.log.allow(time.Now()); ok {
			a.log.Warn("connection closed at accept: over the connection limit", "remote", c.RemoteAddr().String(),
				"similar_not_logged", skipped)
		}
		_ = c.Close()
		a.lim.release(ip)
		return nil
	}
	tc := &trackedConn{Conn: c, a: a, gate: newReadGate(), ip: ip, refuse: verdict == admitRefuse}
	tc.first = &firstPacket{limit: a.lim.maxConnectBytes, stats: a.stats}
	if a.tls == nil {
		tc.plainFirst = tc.first
	}
	if a.lim.connectTimeout > 0 {
		// Replaced by mochi's keep-alive deadline once CONNECT has been
		// read and checked (trackedConn.SetDeadline); covers the TLS
		// handshake too.
		_ = c.SetDeadline(time.Now().Add(a.lim.connectTimeout))
	}
	a.mu.Lock()
	a.pending[tc] = struct{}{}
	a.mu.Unlock()
	return tc
}

func (a *acceptTracker) isStopped() bool {
	select {
	case <-a.stopped:
		return true
	default:
		return false
	}
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
	a.stopMu.Do(func() { close(a.stopped) })
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

// remoteIP is the address a connection comes from, IPv4-mapped IPv6
// unmapped; the zero Addr when unknown (all such connections share one
// per-address count).
func remoteIP(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// trackedConn reports its first Read or its Close to the tracker, carries
// the connection's read gate (embedded_readgate.go), and enforces what applies
// before CONNECT: the deadline set at accept, and (on plain TCP) the size
// of the first packet. Its SetDeadline is called by mochi's read loop only.
type trackedConn struct {
	net.Conn
	a      *acceptTracker
	once   sync.Once
	gate   *readGate
	ip     netip.Addr
	refuse bool // over a connection limit: answer CONNECT with 0x97
	closed atomic.Bool

	first      *firstPacket // the first packet's check; shared with tlsConn
	plainFirst *firstPacket // first, when this connection carries MQTT itself (no TLS)
	connected  atomic.Bool  // mochi has set its own deadline: CONNECT was read
	// kickBy, when not zero, is the latest deadline (Unix nanoseconds)
	// any later SetDeadline may set: the connection is being cut off and
	// must not wait on a client that does not read.
	kickBy atomic.Int64
	// grants is what the authorization policy grants this connection's
	// client (embedded.grantsOf).
	grants atomic.Pointer[access.Grants]
}

func (c *trackedConn) Read(p []byte) (int, error) {
	c.once.Do(func() { c.a.done(c) })
	n, err := c.Conn.Read(p)
	if c.plainFirst != nil && n > 0 {
		if cerr := c.checkFirst(p[:n]); cerr != nil {
			return 0, cerr
		}
	}
	if err != nil && !c.connected.Load() && isTimeout(err) {
		c.a.stats.connectTimeouts.Add(1)
		if ok, skipped := c.a.closeLog.allow(time.Now()); ok {
			c.a.log.Warn("connection closed: no CONNECT before the deadline", "remote", c.RemoteAddr().String(),
				"timeout", c.a.lim.connectTimeout, "similar_not_logged", skipped)
		}
	}
	return n, err
}

// checkFirst passes the plaintext bytes p through the first-packet check.
func (c *trackedConn) checkFirst(p []byte) error {
	if c.first.done {
		return nil
	}
	err := c.first.see(p)
	if err != nil && !c.first.logged {
		c.first.logged = true
		if ok, skipped := c.a.closeLog.allow(time.Now()); ok {
			c.a.log.Warn("connection closed: first packet larger than the CONNECT limit", "remote", c.RemoteAddr().String(),
				"limit", c.a.lim.maxConnectBytes, "similar_not_logged", skipped)
		}
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.a.done(c) })
	c.gate.close()
	if !c.closed.Swap(true) {
		c.a.lim.release(c.ip)
	}
	return c.Conn.Close()
}

// kick bounds every later deadline of the connection to d from now, so
// that a write to a client that stopped reading fails within d instead of
// holding the client's write lock until its keep-alive ends.
func (c *trackedConn) kick(d time.Duration) {
	by := time.Now().Add(d)
	c.kickBy.Store(by.UnixNano())
	_ = c.Conn.SetDeadline(by)
}

// clamp keeps t at or before the kick deadline, if any.
func (c *trackedConn) clamp(t time.Time) time.Time {
	if by := c.kickBy.Load(); by != 0 {
		if k := time.Unix(0, by); t.IsZero() || t.After(k) {
			return k
		}
	}
	return t
}

// tlsConn is a TLS connection whose plaintext passes the first-packet
// check (a trackedConn under TLS sees only ciphertext). It keeps
// *tls.Conn's methods (ConnectionState, NetConn) for the code that looks
// at the client's certificate.
type tlsConn struct {
	*tls.Conn
	tc *trackedConn
}

func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if cerr := c.tc.checkFirst(p[:n]); cerr != nil {
			return 0, cerr
		}
	}
	return n, err
}

// netConnOf unwraps TLS: the trackedConn under a client's connection, nil
// for the inline client and for connections not accepted by the tracker.
func netConnOf(c net.Conn) *trackedConn {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = u.NetConn()
	}
	tc, _ := c.(*trackedConn)
	return tc
}

// logLimiter lets one log line through per period and counts the others,
// so that a flood (of accept errors, refused connections) cannot flood
// the log.
type logLimiter struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	n     int
}

// allow reports whether to log now, and how many were held back since the
// last line.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.n++
		return false, 0
	}
	skipped := l.n
	l.last, l.n = now, 0
	return true, skipped
}
