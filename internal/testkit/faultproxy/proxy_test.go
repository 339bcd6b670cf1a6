package faultproxy_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
)

// echo serves a line echo on loopback until the test ends.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, p *faultproxy.Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roundTrip(c net.Conn, msg string, wait time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func TestProxyForwardsBothWays(t *testing.T) {
	p := faultproxy.Start(t, echo(t))
	c := dial(t, p)
	got, err := roundTrip(c, "hello", 5*time.Second)
	if err != nil || got != "hello\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if p.Accepted() != 1 || p.Live() != 1 {
		t.Fatalf("Accepted %d Live %d, want 1 1", p.Accepted(), p.Live())
	}
}

func TestCutClosesLiveConnections(t *testing.T) {
	p := faultproxy.Start(t, echo(t))
	c := dial(t, p)
	if _, err := roundTrip(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := p.Cut(); n != 1 {
		t.Fatalf("Cut = %d, want 1", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read after Cut succeeded")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the cut connection stayed open")
	}
	// The proxy still serves new connections.
	if got, err := roundTrip(dial(t, p), "again", 5*time.Second); err != nil || got != "again\n" {
		t.Fatalf("after Cut: %q, %v", got, err)
	}
}

func TestBlackholeSwallowsAndRestoreCutsTheDamagedLink(t *testing.T) {
	p := faultproxy.Start(t, echo(t))
	c := dial(t, p)
	if _, err := roundTrip(c, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Blackhole()
	if _, err := roundTrip(c, "lost", 200*time.Millisecond); err == nil {
		t.Fatal("a byte got through the black hole")
	}
	p.Restore()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the damaged link still carries bytes")
	}
	if got, err := roundTrip(dial(t, p), "fresh", 5*time.Second); err != nil || got != "fresh\n" {
		t.Fatalf("after Restore: %q, %v", got, err)
	}
}

func TestRefuseClosesNewConnections(t *testing.T) {
	p := faultproxy.Start(t, echo(t))
	p.Refuse(true)
	c := dial(t, p)
	if _, err := roundTrip(c, "x", 5*time.Second); err == nil {
		t.Fatal("a refused connection carried bytes")
	}
	p.Refuse(false)
	if got, err := roundTrip(dial(t, p), "y", 5*time.Second); err != nil || got != "y\n" {
		t.Fatalf("after Refuse(false): %q, %v", got, err)
	}
}

func TestDelayKeepsOrder(t *testing.T) {
	p := faultproxy.Start(t, echo(t))
	p.SetDelay(time.Millisecond)
	c := dial(t, p)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	for _, m := range []string{"a", "b", "c"} {
		if _, err := io.WriteString(c, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"a", "b", "c"} {
		got, err := r.ReadString('\n')
		if err != nil || got != m+"\n" {
			t.Fatalf("got %q, %v, want %q", got, err, m)
		}
	}
}

func TestSwallowRepliesLetsRequestsThrough(t *testing.T) {
	got := make(chan string, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
		_, _ = io.WriteString(c, "reply\n")
	}()
	p := faultproxy.Start(t, ln.Addr().String())
	p.SwallowReplies()
	c := dial(t, p)
	if _, err := roundTrip(c, "request", 300*time.Millisecond); err == nil {
		t.Fatal("a reply got through")
	}
	select {
	case line := <-got:
		if line != "request\n" {
			t.Fatalf("target got %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not reach the target")
	}
}
