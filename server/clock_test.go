package server_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestManualClockMovesOnlyForward(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := server.NewManualClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("starts at %v", c.Now())
	}
	if now, err := c.Advance(30 * time.Second); err != nil || !now.Equal(start.Add(30*time.Second)) {
		t.Fatalf("Advance: %v, %v", now, err)
	}
	if _, err := c.Advance(-time.Second); !errors.Is(err, server.ErrClockBackwards) {
		t.Fatalf("Advance(-1s): %v", err)
	}
	if _, err := c.Set(start); !errors.Is(err, server.ErrClockBackwards) {
		t.Fatalf("Set back: %v", err)
	}
	if now, err := c.Set(start.Add(30 * time.Second)); err != nil || !now.Equal(start.Add(30*time.Second)) {
		t.Fatalf("Set to the reading: %v, %v", now, err)
	}
	if !c.Now().Equal(start.Add(30 * time.Second)) {
		t.Fatalf("a refused move moved the clock: %v", c.Now())
	}
}

func TestManualClockNeedsNoNow(t *testing.T) {
	_, err := server.New(server.Options{Clock: server.NewManualClock(time.Now()), Now: time.Now})
	if !errors.Is(err, server.ErrInvalidOptions) {
		t.Fatalf("New: %v", err)
	}
	_, err = server.New(server.Options{Clock: server.NewManualClock(time.Now()), DataDir: t.TempDir()})
	if !errors.Is(err, server.ErrInvalidOptions) {
		t.Fatalf("New with a DataDir: %v", err)
	}
	srv := servertest.New(t)
	if _, err := srv.AdvanceClock(time.Second); !errors.Is(err, server.ErrRealClock) {
		t.Fatalf("AdvanceClock on real time: %v", err)
	}
}

// dialRuntime connects a runtime client to srv.
func dialRuntime(t *testing.T, srv *server.Server, id string) *runtime.Client {
	t.Helper()
	host, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := runtime.Dial(ctx, runtime.Config{Host: host, Port: p, ClientID: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestAdvanceClockExpiresKeysAndLeases(t *testing.T) {
	clock := server.NewManualClock(time.Now())
	srv := servertest.New(t, servertest.WithManualClock(clock))
	a, b := dialRuntime(t, srv, "clock-a"), dialRuntime(t, srv, "clock-b")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := a.Set(ctx, []byte("reading"), []byte("21.5"), runtime.SetOptions{TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Set(ctx, []byte("config"), []byte("kept"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.KeyNotify(ctx, []byte("reading")); err != nil {
		t.Fatal(err)
	}
	lease, err := runtime.NewLock(a, []byte("owner"), 3*time.Second).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The clock stands still: nothing expires on real time.
	if _, _, err := b.Get(ctx, []byte("reading")); err != nil {
		t.Fatalf("before the advance: %v", err)
	}
	if _, err := srv.AdvanceClock(11 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Expired by the advance itself, before it returned.
	if _, ok := srv.Engine().Lookup([]byte("reading")); ok {
		t.Fatal("reading outlived its TTL")
	}
	if _, _, err := b.Get(ctx, []byte("reading")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after the advance: %v, want ErrNotFound", err)
	}
	if _, _, err := b.Get(ctx, []byte("config")); err != nil {
		t.Fatalf("a key without TTL: %v", err)
	}
	// The lease's key expired on the server: another client takes the
	// lock, and the holder learns it lost it at its next renewal.
	if _, ok, err := runtime.NewLock(b, []byte("owner"), 3*time.Second).TryAcquire(ctx); err != nil || !ok {
		t.Fatalf("TryAcquire after the lease expired: %v, %v", ok, err)
	}
	select {
	case <-lease.Lost():
	case <-ctx.Done():
		t.Fatal("the holder did not learn it lost the lease")
	}
	if !errors.Is(lease.Err(), runtime.ErrLeaseLost) {
		t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
	}
}

func TestManualClockKeepsVersionsMonotonic(t *testing.T) {
	clock := server.NewManualClock(time.Now())
	srv := servertest.New(t, servertest.WithManualClock(clock))
	c := dialRuntime(t, srv, "clock-hlc")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	set := func() hlc.HLC {
		t.Helper()
		v, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := set()
	v2 := set() // the clock stands: the counter orders the versions
	if v2.Compare(v1) <= 0 {
		t.Fatalf("%v then %v on a standing clock", v1, v2)
	}
	before := clock.Now()
	if _, err := srv.AdvanceClock(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	v3 := set()
	if v3.Compare(v2) <= 0 || v3.Time().Before(before.Add(30*time.Second).Truncate(time.Millisecond)) {
		t.Fatalf("%v after advancing 30s from %v (last %v)", v3, before, v2)
	}
	if _, err := srv.SetClock(before); !errors.Is(err, server.ErrClockBackwards) {
		t.Fatalf("SetClock back: %v", err)
	}
	if v4 := set(); v4.Compare(v3) <= 0 {
		t.Fatalf("%v after %v", v4, v3)
	}
}

// TestManualClockDriftRule pins what docs/testing.md says of how far the
// clock may be moved: clients refuse versions more than their maximum
// drift (one minute by default) ahead of their own clock, and the server
// refuses request stamps more than 55 s ahead of its own.
func TestManualClockDriftRule(t *testing.T) {
	t.Run("ahead of the clients", func(t *testing.T) {
		clock := server.NewManualClock(time.Now())
		srv := servertest.New(t, servertest.WithManualClock(clock))
		c := dialRuntime(t, srv, "clock-ahead")
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if _, err := srv.AdvanceClock(2 * time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); !errors.Is(err, hlc.ErrDrift) {
			t.Fatalf("Set on a server 2 minutes ahead: %v, want hlc.ErrDrift", err)
		}
	})
	t.Run("behind the clients", func(t *testing.T) {
		// A clock left standing falls behind its clients.
		clock := server.NewManualClock(time.Now().Add(-time.Minute))
		srv := servertest.New(t, servertest.WithManualClock(clock))
		c := dialRuntime(t, srv, "clock-behind")
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrTimestampSkew) {
			t.Fatalf("Set on a server a minute behind: %v, want ErrTimestampSkew", err)
		}
		// ssgen clock set now catches up.
		if _, err := srv.SetClock(time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
			t.Fatalf("Set after catching up: %v", err)
		}
	})
}

// The manual clock works the same in external mode: the engine's time is
// the service's, whichever broker carries the requests.
func TestManualClockInExternalMode(t *testing.T) {
	clock := server.NewManualClock(time.Now())
	broker := mosquittoURL(t)
	srv := servertest.NewExternal(t, broker, servertest.WithManualClock(clock))
	cfg, err := runtime.FromURL(broker)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = "clock-external"
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Set(ctx, []byte("reading"), []byte("1"), runtime.SetOptions{TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.AdvanceClock(11 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, []byte("reading")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after the advance: %v, want ErrNotFound", err)
	}
}

// Review of #30, F10: a clock moved past year 9999 could not be written
// as RFC 3339, so ssgen clock set with the reading it printed failed.
// Moves past MaxManualClock are refused and change nothing; every
// reading round-trips through RFC 3339.
func TestManualClockStopsAtMaxManualClock(t *testing.T) {
	c := server.NewManualClock(time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC))
	for _, move := range []func() (time.Time, error){
		func() (time.Time, error) { return c.Set(server.MaxManualClock.Add(time.Second)) },
		func() (time.Time, error) { return c.Set(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) },
	} {
		if _, err := move(); !errors.Is(err, server.ErrClockRange) {
			t.Fatalf("move past the bound: %v, want ErrClockRange", err)
		}
	}
	if _, err := c.Set(server.MaxManualClock); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Advance(time.Nanosecond); !errors.Is(err, server.ErrClockRange) {
		t.Fatalf("a nanosecond past the bound: %v", err)
	}
	s := c.Now().UTC().Format(time.RFC3339Nano)
	back, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !back.Equal(c.Now()) {
		t.Fatalf("reading %s does not round-trip: %v", s, err)
	}
}
