package engine

import (
	"math"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// DriftMargin is how much narrower than MaxDrift the window of request
// stamps the engine accepts is: a __ts or __ft may be at most
// MaxDrift - DriftMargin ahead of Config.Now (55 s with the defaults).
//
// Why a margin: every version the engine hands out is its clock, and a
// request __ts is merged into that clock, so a client allowed to send a
// __ts MaxDrift ahead could make every later response carry a __ts right
// at the edge of what clients accept (and one millisecond past it after a
// counter overflow, which is how the attack this guards against worked).
// A client refuses a received __ts more than its MaxDrift (one minute by
// default) ahead of its own physical clock. With merged stamps held to
// MaxDrift - DriftMargin, and counters held so that the clock never
// overflows into the next millisecond (see MaxCounter), every version
// satisfies Wall <= Now + MaxDrift - DriftMargin, so a client enforcing MaxDrift
// accepts it as long as its clock lags the engine's by at most
// DriftMargin. Five seconds covers unsynchronised hosts and millisecond
// rounding many times over, while a client whose clock runs ahead of the
// engine's keeps 55 of the 60 seconds the protocol promises it.
// When MaxDrift is configured below twice DriftMargin the margin is half of
// MaxDrift instead.
const DriftMargin = 5 * time.Second

// MaxCounter and CounterSlack bound the counter of a request __ts, so that
// the engine's counter never overflows: an overflow moves the clock to the
// next millisecond, which at the edge of the window would be past it, and
// repeated it would ratchet the clock further each time.
//
// A __ts is accepted whatever its counter when its wall clock is behind
// the physical clock or the engine's clock (merging it takes the other's
// counter); when its wall clock equals the engine's, with a counter at most
// MaxCounter or at most CounterSlack above the engine's own counter (a
// client that merged a version sends it back a few ticks later, however
// high the engine's counter was); when it is ahead, with a counter at most
// MaxCounter. So each accepted request
// raises the counter within one millisecond of wall clock by at most
// CounterSlack+1, starting from at most MaxCounter+1: an overflow would
// take 2^43 requests while the engine's wall clock stays on one
// millisecond, which it does for no longer than the accept window (55 s).
// Official clients send counters of a few digits. A __ft is compared, not
// merged, so only its wall clock is checked.
const (
	MaxCounter   = math.MaxUint64 >> 1
	CounterSlack = 1 << 20
)

// acceptWindow is how far ahead of the engine's physical clock a request
// __ts or __ft may be, given the configured MaxDrift (see DriftMargin).
func acceptWindow(maxDrift time.Duration) time.Duration {
	return maxDrift - min(DriftMargin, maxDrift/2)
}

// stamps are a request's parsed __ts and __ft.
type stamps struct {
	ts, ft       hlc.HLC
	hasTS, hasFT bool
	// merge tells whether ts moves the engine's clock: always for a write,
	// and for a read only when ts is not ahead of the physical clock.
	merge bool
}

// readStamps parses and checks the request's __ts (required for SET) and,
// for a write (SET, DEL, VDEL: the commands a fencing token applies to),
// its __ft. The order of the checks is: __ts present, __ts parses, __ft
// parses, __ts within the window, __ft within the window.
//
// A stamp is within the window when its wall clock is at most
// acceptWindow(MaxDrift) ahead of now and, for a __ts, its counter passes
// counterOK; anything else is answered with the skew error of that stamp
// (ErrTimestampSkew or ErrFencingTokenSkew).
//
// A read (GET, KEYNOTIFY, SCAN) merges its __ts into the clock only when
// that __ts is not ahead of the physical clock. Nothing a read returns
// needs to sort after the read's own __ts (a GET hit carries the key's
// version), so a client allowed to read but not to write cannot move the
// clock that versions and fencing tokens come from at all; a write can,
// up to the window.
func (e *Engine) readStamps(req *Request, now time.Time, requireTS, write bool) (stamps, Error) {
	var s stamps
	if !req.HasTimestamp && requireTS {
		return s, ErrMissingTimestamp
	}
	var err error
	if req.HasTimestamp {
		if s.ts, err = hlc.Parse(req.Timestamp); err != nil {
			return s, ErrMalformedTimestamp
		}
		s.hasTS = true
	}
	if write && req.HasFencingToken {
		if s.ft, err = hlc.Parse(req.FencingToken); err != nil {
			return s, ErrMalformedTimestamp
		}
		s.hasFT = true
	}
	phys := uint64(max(now.UnixMilli(), 0))
	limit := phys + uint64(e.accept.Milliseconds())
	if s.hasTS && (s.ts.Wall > limit || !e.counterOK(s.ts, phys)) {
		return s, ErrTimestampSkew
	}
	if s.hasFT && s.ft.Wall > limit {
		return s, ErrFencingTokenSkew
	}
	s.merge = s.hasTS && (write || s.ts.Wall <= phys)
	return s, ""
}

// counterOK applies the counter rule of MaxCounter to a request __ts, phys
// being the physical clock in milliseconds.
func (e *Engine) counterOK(ts hlc.HLC, phys uint64) bool {
	if ts.Counter <= MaxCounter {
		return true
	}
	last := e.clock.Last()
	// Behind the physical clock or the engine's clock, a merge takes the
	// other's counter (or none): the __ts's is irrelevant.
	return ts.Wall < max(phys, last.Wall) ||
		ts.Wall == last.Wall && (ts.Counter <= last.Counter || ts.Counter-last.Counter <= CounterSlack)
}

// checkFence applies the fencing rule (docs/wire-protocol.md#fencing) to a SET, DEL or
// VDEL of ent (nil when the key is absent).
func checkFence(ent *entry, s stamps) Error {
	if ent == nil || !ent.fenced() {
		return ""
	}
	if !s.hasFT {
		return ErrFencingTokenRequired
	}
	if s.ft.Compare(ent.meta.fence) < 0 {
		return ErrFencingTokenLowerVersion
	}
	return ""
}

// tick advances the engine's clock for a change or a response: merged with
// the request's __ts when there is one, so the result is greater than it.
//
// A counter overflow is unreachable through requests (see MaxCounter); only a version seeded with Put or
// restored from disk could bring the counter there. It is escaped by
// moving the wall clock one millisecond ahead, which the HLC rules allow;
// the clock's wide drift bound (see New) guarantees that this is accepted.
func (e *Engine) tick(ts *hlc.HLC) hlc.HLC {
	var v hlc.HLC
	var err error
	if ts != nil {
		v, err = e.clock.Update(*ts)
	} else {
		v, err = e.clock.Now()
	}
	if err == nil {
		return v
	}
	wall := e.clock.Last().Wall
	if ts != nil {
		wall = max(wall, ts.Wall)
	}
	if v, err = e.clock.Update(hlc.HLC{Wall: wall + 1}); err == nil {
		return v
	}
	// Unreachable while merged stamps are held within the window; keep the
	// last value rather than answer without a version.
	return e.clock.Last()
}

// requestTick is tick merged with the request's __ts if it is to be
// merged (see readStamps).
func (e *Engine) requestTick(s stamps) hlc.HLC {
	if s.merge {
		return e.tick(&s.ts)
	}
	return e.tick(nil)
}

// keyLengthArg validates the key argument; the engine copies it only when it
// stores it.
func keyLengthArg(b []byte) Error {
	if len(b) == 0 {
		return ErrKeyLengthZero
	}
	return ""
}
