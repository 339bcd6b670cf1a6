package bufconn

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// The TCP variant embeds *net.TCPConn so that net.Buffers keeps using
// writev (checked with strace: one writev for three buffers); this test
// checks that it is chosen and that what it writes arrives whole.
func TestKeepsVectoredWritesAndDeliversEveryByte(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer s.Close()
		b, _ := io.ReadAll(s)
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := New(raw)
	if _, ok := c.(*tcpConn); !ok {
		t.Fatalf("New(*net.TCPConn) = %T, want the TCP variant", c)
	}
	bufs := net.Buffers{[]byte("hello, "), []byte("vectored "), []byte("world")}
	if _, err := bufs.WriteTo(c); err != nil {
		t.Fatal(err)
	}
	raw.(*net.TCPConn).CloseWrite()
	if b := <-got; string(b) != "hello, vectored world" {
		t.Fatalf("peer read %q", b)
	}
}

func TestReadsAreBufferedAndComplete(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	want := bytes.Repeat([]byte("0123456789"), 5000) // larger than Size
	go func() {
		_, _ = a.Write(want)
		a.Close()
	}()
	c := New(b)
	if _, ok := c.(*conn); !ok {
		t.Fatalf("New(pipe) = %T, want the generic variant", c)
	}
	var one [1]byte
	if _, err := io.ReadFull(c, one[:]); err != nil || one[0] != '0' {
		t.Fatalf("first byte %q, %v", one[0], err)
	}
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(one[:], rest...), want) {
		t.Fatalf("read %d bytes, want %d, or they differ", len(rest)+1, len(want))
	}
}

// paho serializes the writes of one packet only on a connection that is a
// sync.Locker (its thread-safe wrapper, used over TLS); wrapping must keep
// that, or concurrent publishers corrupt the stream.
func TestKeepsTheLockOfAThreadSafeConnection(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	locked := struct {
		net.Conn
		sync.Locker
	}{b, &sync.Mutex{}}
	c := New(&locked)
	l, ok := c.(sync.Locker)
	if !ok {
		t.Fatalf("New(locker) = %T, not a sync.Locker", c)
	}
	l.Lock()
	if locked.Locker.(*sync.Mutex).TryLock() {
		t.Fatal("locking the wrapper did not lock the wrapped connection")
	}
	l.Unlock()
	if _, ok := New(a).(sync.Locker); ok {
		t.Fatal("a plain connection became a sync.Locker")
	}
}
