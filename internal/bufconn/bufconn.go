// Package bufconn buffers the reads of a network connection for paho.
//
// paho.golang reads each packet straight from its net.Conn: one read for
// the first byte, one per byte of the remaining-length field, and one for
// the rest, so three or more system calls per packet, and never more than
// one packet per call. Wrapped, a packet costs at most one read, and the
// packets that arrived together (a PUBACK and a response, say) share it.
//
// Writes are not touched. A *net.TCPConn is embedded, not wrapped behind
// an interface, so that net.Buffers still finds its vectored write: paho
// writes each packet as net.Buffers, one writev on a TCP connection, and
// would otherwise make one write per part of the packet.
package bufconn

import (
	"bufio"
	"net"
	"sync"
)

// Size is the read buffer of a connection: enough for a burst of small
// packets; a larger packet is read straight into paho's own buffer.
const Size = 16 << 10

// New returns c with buffered reads. Only one goroutine may read from
// the result (paho has one reader per connection).
//
// A connection that is also a sync.Locker stays one: paho locks such a
// connection (packets.NewThreadSafeConn, used over TLS) around the several
// Write calls of one packet, and without the lock the packets of
// concurrent publishers interleave on the wire.
func New(c net.Conn) net.Conn {
	r := bufio.NewReaderSize(c, Size)
	if tc, ok := c.(*net.TCPConn); ok {
		return &tcpConn{TCPConn: tc, r: r}
	}
	if l, ok := c.(sync.Locker); ok {
		return &lockedConn{conn: conn{Conn: c, r: r}, Locker: l}
	}
	return &conn{Conn: c, r: r}
}

type tcpConn struct {
	*net.TCPConn
	r *bufio.Reader
}

func (c *tcpConn) Read(p []byte) (int, error) { return c.r.Read(p) }

type conn struct {
	net.Conn
	r *bufio.Reader
}

func (c *conn) Read(p []byte) (int, error) { return c.r.Read(p) }

type lockedConn struct {
	conn
	sync.Locker
}
