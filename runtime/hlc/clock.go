package hlc

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// DefaultMaxDrift is how far ahead of the physical clock a received HLC may
// be, as the state store and the official clients enforce it.
const DefaultMaxDrift = time.Minute

// ErrDrift is matched (with errors.Is) by a *DriftError.
var ErrDrift = errors.New("hlc: timestamp too far in the future")

// ErrCounterOverflow is returned when the counter cannot be incremented.
var ErrCounterOverflow = errors.New("hlc: counter overflow")

// DriftError reports a received clock more than the maximum drift ahead of
// the local physical clock.
type DriftError struct {
	Remote   HLC
	Physical time.Time
	MaxDrift time.Duration
}

func (e *DriftError) Error() string {
	ahead := time.Duration(int64(e.Remote.Wall)-e.Physical.UnixMilli()) * time.Millisecond
	return fmt.Sprintf("hlc: timestamp %s is %s ahead of the physical clock (max drift %s)", e.Remote, ahead, e.MaxDrift)
}

// Is reports whether target is ErrDrift.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// Clock is a concurrency-safe hybrid logical clock for one node.
type Clock struct {
	node     string
	now      func() time.Time
	maxDrift time.Duration

	mu   sync.Mutex
	last HLC
}

// Option configures a Clock.
type Option func(*Clock)

// WithNow replaces the physical time source (time.Now by default); tests
// use it to run the clock on a fake time.
func WithNow(now func() time.Time) Option { return func(c *Clock) { c.now = now } }

// WithMaxDrift sets how far ahead of the physical clock a received HLC may
// be (DefaultMaxDrift by default).
func WithMaxDrift(d time.Duration) Option { return func(c *Clock) { c.maxDrift = d } }

// NewClock returns a clock whose values carry node as their node id.
// node must not contain ':'.
func NewClock(node string, opts ...Option) *Clock {
	c := &Clock{node: node, now: time.Now, maxDrift: DefaultMaxDrift}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Node returns the clock's node id.
func (c *Clock) Node() string { return c.node }

// MaxDrift returns the clock's maximum drift.
func (c *Clock) MaxDrift() time.Duration { return c.maxDrift }

// Physical returns the physical time source's current reading.
func (c *Clock) Physical() time.Time { return c.now() }

// Last returns the most recent value the clock produced, without ticking.
func (c *Clock) Last() HLC {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Now ticks the clock for a local event (sending a request, assigning a
// version) and returns the new value: the physical clock if it is ahead of
// the last value, otherwise the last value with its counter incremented.
func (c *Clock) Now() (HLC, error) {
	pt := physicalMs(c.now())
	c.mu.Lock()
	defer c.mu.Unlock()
	next := HLC{Node: c.node}
	if pt > c.last.Wall {
		next.Wall = pt
	} else {
		if c.last.Counter == math.MaxUint64 {
			return HLC{}, ErrCounterOverflow
		}
		next.Wall, next.Counter = c.last.Wall, c.last.Counter+1
	}
	c.last = next
	return next, nil
}

// Update merges a received clock into this one (the receive rule of a
// standard HLC) and returns the new value, which is greater than both the
// previous value and remote. A remote clock more than the maximum drift
// ahead of the physical clock is refused with a *DriftError and changes
// nothing.
func (c *Clock) Update(remote HLC) (HLC, error) {
	phys := c.now()
	if err := c.CheckDrift(remote, phys); err != nil {
		return HLC{}, err
	}
	pt := physicalMs(phys)
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := max(pt, c.last.Wall, remote.Wall)
	var counter uint64
	switch {
	case wall == c.last.Wall && wall == remote.Wall:
		counter = max(c.last.Counter, remote.Counter)
	case wall == c.last.Wall:
		counter = c.last.Counter
	case wall == remote.Wall:
		counter = remote.Counter
	default: // the physical clock alone is ahead
		c.last = HLC{Wall: wall, Node: c.node}
		return c.last, nil
	}
	if counter == math.MaxUint64 {
		return HLC{}, ErrCounterOverflow
	}
	c.last = HLC{Wall: wall, Counter: counter + 1, Node: c.node}
	return c.last, nil
}

// CheckDrift returns a *DriftError if h is more than the maximum drift ahead
// of the physical time phys. The state store applies it to __ts and __ft.
func (c *Clock) CheckDrift(h HLC, phys time.Time) error {
	if h.Wall > physicalMs(phys)+uint64(c.maxDrift.Milliseconds()) {
		return &DriftError{Remote: h, Physical: phys, MaxDrift: c.maxDrift}
	}
	return nil
}

func physicalMs(t time.Time) uint64 {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	return uint64(ms)
}
