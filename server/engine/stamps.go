package engine

import (
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// stamps are a request's parsed __ts and __ft.
type stamps struct {
	ts, ft       hlc.HLC
	hasTS, hasFT bool
}

// readStamps parses and checks the request's __ts (required for SET) and,
// for the commands a fencing token applies to, its __ft. The order of the
// checks is: __ts present, __ts parses, __ft parses, __ts within the drift,
// __ft within the drift.
func (e *Engine) readStamps(req *Request, now time.Time, requireTS, fenced bool) (stamps, Error) {
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
	if fenced && req.HasFencingToken {
		if s.ft, err = hlc.Parse(req.FencingToken); err != nil {
			return s, ErrMalformedTimestamp
		}
		s.hasFT = true
	}
	limit := uint64(max(now.UnixMilli(), 0)) + uint64(e.maxDrift.Milliseconds())
	if s.hasTS && s.ts.Wall > limit {
		return s, ErrRequestTimestampDrift
	}
	if s.hasFT && s.ft.Wall > limit {
		return s, ErrFencingTokenDrift
	}
	return s, ""
}

// checkFence applies the fencing rule (wire contract §7) to a SET, DEL or
// VDEL of ent (nil when the key is absent).
func checkFence(ent *entry, s stamps) Error {
	if ent == nil || ent.fence == nil {
		return ""
	}
	if !s.hasFT {
		return ErrFencingTokenRequired
	}
	if s.ft.Compare(*ent.fence) < 0 {
		return ErrFencingTokenLower
	}
	return ""
}

// tick advances the engine's clock for a change or a response: merged with
// the request's __ts when there is one, so the result is greater than it.
//
// A counter overflow (only reachable with a __ts whose counter is near
// 2^64) is escaped by moving the wall clock one millisecond ahead, which the
// HLC rules allow; the clock's wide drift bound (see New) guarantees that
// this is accepted.
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
	// Unreachable while requests are held within MaxDrift; keep the last
	// value rather than answer without a version.
	return e.clock.Last()
}

// requestTick is tick merged with the request's __ts if it has one.
func (e *Engine) requestTick(s stamps) hlc.HLC {
	if s.hasTS {
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
