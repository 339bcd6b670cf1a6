package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	mqtt "github.com/mochi-mqtt/server/v2"
)

// failingListener returns a temporary accept error n times, then
// accepts for real.
type failingListener struct {
	net.Listener
	left atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.left.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

// mochi's accept loop ends on any error; the tracker's Accept retries
// every error but a closed listener's, so the server still accepts.
func TestAcceptErrorsDoNotStopTheServer(t *testing.T) {
	const failures = 5
	s, err := New(Options{Listen: "127.0.0.1:0", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s.tr.(*embedded).wrapListener = func(l net.Listener) net.Listener {
		fl := &failingListener{Listener: l}
		fl.left.Store(failures)
		return fl
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ca, err := c.Connect(ctx, &paho.Connect{ClientID: "after-emfile", CleanStart: true, KeepAlive: 30})
	if err != nil || ca.ReasonCode != 0 {
		t.Fatalf("connect after %d accept errors: %v %v", failures, ca, err)
	}
	_ = c.Disconnect(&paho.Disconnect{})
	if got := s.Stats().AcceptErrors; got != failures {
		t.Fatalf("AcceptErrors = %d, want %d", got, failures)
	}
}

// A closed listener ends Accept at once, even during a back-off.
func TestAcceptEndsWhenStopped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: l}
	fl.left.Store(1 << 30)
	a := newAcceptTracker(fl, nil, nil, discardLogger())
	waits := make(chan time.Duration, 64)
	a.sleep = func(d time.Duration, stopped <-chan struct{}) {
		select {
		case waits <- d:
		default:
		}
		<-stopped
	}
	done := make(chan error)
	go func() { _, err := a.Accept(); done <- err }()
	if d := <-waits; d != acceptBackoffMin {
		t.Fatalf("first back-off %v", d)
	}
	a.stop(time.Second)
	if err := <-done; err == nil {
		t.Fatal("Accept returned a connection from a stopped listener")
	}
}

func TestAcceptBackoffDoublesUpToOneSecond(t *testing.T) {
	var got []time.Duration
	d := time.Duration(0)
	for range 10 {
		d = nextAcceptBackoff(d)
		got = append(got, d)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("back-off %d = %v, want %v ms", i, got[i], want[i])
		}
	}
}

func TestLogLimiter(t *testing.T) {
	l := logLimiter{every: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at      time.Duration
		ok      bool
		skipped int
	}{
		{0, true, 0}, {time.Second, false, 0}, {2 * time.Second, false, 0},
		{10 * time.Second, true, 2}, {11 * time.Second, false, 0}, {30 * time.Second, true, 1},
	}
	for i, s := range steps {
		ok, skipped := l.allow(t0.Add(s.at))
		if ok != s.ok || skipped != s.skipped {
			t.Fatalf("step %d: %v %d, want %v %d", i, ok, skipped, s.ok, s.skipped)
		}
	}
}

func TestConnLimitsAdmission(t *testing.T) {
	c := newConnLimits(Limits{MaxConnections: 20, MaxConnectionsPerIP: 10})
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	var got []admission
	for range 12 {
		got = append(got, c.acquire(a))
	}
	// 10 admitted, 1 refused (margin 10/10), then closed at accept.
	for i, v := range got {
		want := admitOK
		switch {
		case i == 10:
			want = admitRefuse
		case i > 10:
			want = admitClose
		}
		if v != want {
			t.Fatalf("connection %d from a: %v, want %v", i, v, want)
		}
	}
	if v := c.acquire(b); v != admitOK {
		t.Fatalf("another address: %v", v)
	}
	for range 12 {
		c.release(a)
	}
	c.release(b)
	if open, addrs := c.openConns(), len(c.perIP); open != 0 || addrs != 0 {
		t.Fatalf("after release: %d open from %d addresses", open, addrs)
	}
}

func TestFirstPacket(t *testing.T) {
	cases := []struct {
		name  string
		in    []byte
		limit int
		err   bool
	}{
		{"empty CONNECT", []byte{0x10, 0x00}, 16, false},
		{"CONNECT within", append([]byte{0x10, 0x0a}, make([]byte, 10)...), 12, false},
		{"CONNECT one over", append([]byte{0x10, 0x0b}, make([]byte, 11)...), 12, true},
		{"1 MiB header only", []byte{0x10, 0x80, 0x80, 0x40}, 1024, true},
		{"max length", []byte{0x10, 0xff, 0xff, 0xff, 0x7f}, 64 << 10, true},
		{"not CONNECT, left to mochi", []byte{0x30, 0xff, 0xff, 0xff, 0x7f}, 16, false},
		{"malformed length, left to mochi", []byte{0x10, 0xff, 0xff, 0xff, 0xff, 0x01}, 16, false},
		{"only the first packet", []byte{0x10, 0x01, 0x00, 0x30, 0xff, 0xff, 0xff, 0x7f}, 16, false},
		{"no limit", []byte{0x10, 0xff, 0xff, 0xff, 0x7f}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole := &firstPacket{limit: c.limit}
			if err := whole.see(c.in); (err != nil) != c.err {
				t.Fatalf("at once: %v, want error %v", err, c.err)
			}
			bytewise := &firstPacket{limit: c.limit}
			var err error
			for i := range c.in {
				if err = bytewise.see(c.in[i : i+1]); err != nil {
					break
				}
			}
			if (err != nil) != c.err {
				t.Fatalf("byte by byte: %v, want error %v", err, c.err)
			}
			if err != nil && !errors.Is(bytewise.see([]byte{0}), errConnectTooLarge) {
				t.Fatal("a refused first packet passes later bytes")
			}
		})
	}
}

// The verdict on a byte stream does not depend on how reads split it.
func FuzzFirstPacket(f *testing.F) {
	f.Add([]byte{0x10, 0x80, 0x80, 0x40}, uint16(1024), uint8(1))
	f.Add(append([]byte{0x10, 0x0a}, make([]byte, 10)...), uint16(12), uint8(3))
	f.Add([]byte{0x10, 0xff, 0xff, 0xff, 0xff, 0x01}, uint16(16), uint8(2))
	f.Add([]byte{0x30, 0x01, 0x00, 0x10, 0x7f}, uint16(4), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, limit uint16, chunk uint8) {
		whole := &firstPacket{limit: int(limit)}
		errWhole := whole.see(in)
		parts := &firstPacket{limit: int(limit)}
		step := int(chunk)%7 + 1
		var errParts error
		for i := 0; i < len(in) && errParts == nil; i += step {
			errParts = parts.see(in[i:min(i+step, len(in))])
		}
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("at once %v, in chunks of %d %v", errWhole, step, errParts)
		}
	})
}

func TestOutputsAccounting(t *testing.T) {
	o := newOutputs(100)
	k := &mqtt.Client{}
	steps := []struct {
		op   string
		id   uint16
		size int64
		over bool
		held int64
	}{
		{"add", 1, 150, false, 150}, // one message always passes
		{"add", 1, 60, false, 60},   // a reused packet id replaces
		{"add", 2, 30, false, 90},
		{"remove", 1, 0, false, 30},
		{"remove", 9, 0, false, 30}, // unknown id
		{"add", 3, 80, true, 110},   // over, two messages
		{"add", 4, 80, false, 190},  // reported once
	}
	for i, s := range steps {
		var over bool
		if s.op == "add" {
			over = o.add(k, s.id, s.size)
		} else {
			o.remove(k, s.id)
		}
		if over != s.over || o.held(k) != s.held {
			t.Fatalf("step %d: over %v held %d, want %v %d", i, over, o.held(k), s.over, s.held)
		}
	}
	o.clear(k)
	if o.held(k) != 0 || !o.kicked(k) {
		t.Fatal("clear forgot the mark or kept the bytes")
	}
	o.forget(k)
	if o.kicked(k) || len(o.by) != 0 {
		t.Fatal("forget kept the record")
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
