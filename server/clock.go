package server

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrClockBackwards is returned by ManualClock.Advance and Set for a move
// back in time, which changes nothing: versions (the HLC) must never go
// back, and a key's deadline must never come back to life.
var ErrClockBackwards = errors.New("server: the clock only moves forward")

// ErrClockRange is returned by ManualClock.Advance and Set for a move
// past MaxManualClock, which changes nothing.
var ErrClockRange = errors.New("server: the clock stops at " + MaxManualClock.Format(time.RFC3339))

// MaxManualClock is the latest time a ManualClock moves to: the last
// second of year 9999, the last an RFC 3339 time (ssgen clock set, the
// HTTP API, a snapshot) can write, so that every reading round-trips.
var MaxManualClock = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// ErrRealClock is returned by Server.AdvanceClock and SetClock on a
// server running on real time (Options.Clock unset).
var ErrRealClock = errors.New("server: the clock is real time (start the server with a manual clock)")

// ManualClock is a clock that moves only when told (ssgen serve --clock
// manual): it starts at the time it is made with and stands still until
// Advance or Set moves it forward. Give it to Options.Clock and the
// server's key expiry, lock lease expiry and versions (the HLC) follow
// it; a server moved by Server.AdvanceClock or SetClock, or through its
// HTTP API (ClockHandler), expires what fell due at once.
//
// It moves the state store's time only: the embedded broker's keep-alives
// and session expiry, and clients' clocks, run on real time.
//
// A ManualClock is safe for concurrent use.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
	// moved are told after each move, outside the lock (servers expire
	// what fell due).
	moved []func()
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{t: start.Round(0)}
}

// Now returns the clock's reading.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d and returns the new reading; a
// negative d is refused with ErrClockBackwards.
func (c *ManualClock) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return c.Now(), fmt.Errorf("%w: cannot advance by %s", ErrClockBackwards, d)
	}
	return c.move(func(now time.Time) time.Time { return now.Add(d) })
}

// Set moves the clock to t and returns it; a t before the clock's reading
// is refused with ErrClockBackwards (and setting the current reading again
// is allowed).
func (c *ManualClock) Set(t time.Time) (time.Time, error) {
	return c.move(func(time.Time) time.Time { return t.Round(0) })
}

func (c *ManualClock) move(to func(time.Time) time.Time) (time.Time, error) {
	c.mu.Lock()
	next := to(c.t)
	if next.After(MaxManualClock) {
		now := c.t
		c.mu.Unlock()
		return now, fmt.Errorf("%w: cannot move from %s past it", ErrClockRange, now.UTC().Format(time.RFC3339Nano))
	}
	if next.Before(c.t) {
		now := c.t
		c.mu.Unlock()
		return now, fmt.Errorf("%w: cannot move from %s back to %s", ErrClockBackwards,
			now.UTC().Format(time.RFC3339Nano), next.UTC().Format(time.RFC3339Nano))
	}
	c.t = next
	moved := c.moved
	c.mu.Unlock()
	for _, f := range moved {
		f()
	}
	return next, nil
}

// onMove registers f to be called after each move.
func (c *ManualClock) onMove(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moved = append(c.moved[:len(c.moved):len(c.moved)], f)
}

// Clock returns the server's manual clock, nil when it runs on real time
// (or on an Options.Now of its own).
func (s *Server) Clock() *ManualClock { return s.opts.Clock }

// Now is the state store's time: the manual clock's reading, else
// Options.Now or the real time.
func (s *Server) Now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// AdvanceClock moves the server's manual clock forward by d and expires
// every key that fell due (DELETE notifications included), before it
// returns the new time. It fails with ErrRealClock without a manual
// clock, and with ErrClockBackwards for a negative d.
func (s *Server) AdvanceClock(d time.Duration) (time.Time, error) {
	if s.opts.Clock == nil {
		return time.Now(), ErrRealClock
	}
	return s.opts.Clock.Advance(d)
}

// SetClock moves the server's manual clock to t, as AdvanceClock does;
// a t earlier than the clock's reading fails with ErrClockBackwards.
func (s *Server) SetClock(t time.Time) (time.Time, error) {
	if s.opts.Clock == nil {
		return time.Now(), ErrRealClock
	}
	return s.opts.Clock.Set(t)
}

// clockMoved expires what fell due after the manual clock moved, unless
// the server is closed.
func (s *Server) clockMoved() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.eng.Expire()
	}
}
