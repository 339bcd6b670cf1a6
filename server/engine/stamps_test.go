package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// windowMs is the accept window with the default MaxDrift.
var windowMs = (hlc.DefaultMaxDrift - DriftMargin).Milliseconds()

// tsAhead is a __ts aheadMs milliseconds past the harness's current time.
func (h *harness) tsAhead(aheadMs int64, counter uint64, node string) string {
	return fmt.Sprintf("%d:%d:%s", h.clock.Now().UnixMilli()+aheadMs, counter, node)
}

// checkWithinWindow fails unless v (a version the engine handed out) is
// within the accept window of the engine's physical clock, and accepted by
// a client with the default drift whose clock lags the engine's by up to
// DriftMargin.
func (h *harness) checkWithinWindow(what string, v hlc.HLC) {
	h.t.Helper()
	if v.IsZero() {
		return
	}
	now := h.clock.Now()
	if limit := uint64(now.UnixMilli() + windowMs); v.Wall > limit {
		h.t.Fatalf("%s: version %v is %d ms past the window", what, v, v.Wall-limit)
	}
	client := hlc.NewClock("client", hlc.WithNow(func() time.Time { return now.Add(-DriftMargin) }))
	if _, err := client.Update(v); err != nil {
		h.t.Fatalf("%s: a client %s behind refuses version %v: %v", what, DriftMargin, v, err)
	}
}

// checkNotes checks the versions of the notifications since the last call.
func (h *harness) checkNotes() {
	h.t.Helper()
	for _, n := range h.takeNotes() {
		h.checkWithinWindow("notification", n.Version)
	}
}

// The attack of issue #12: a client allowed only to read sends GETs with
// __ts = now + 59,999 ms and counter 2^64-1. Before the fix the engine
// merged it, the counter overflow moved its clock one more millisecond,
// and every later response carried a __ts 60.001 s ahead, which clients
// with the default one-minute drift refused although their SETs had been
// applied.
func TestAttackGetFarAheadWithMaxCounter(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	attack := h.tsAhead(59_999, math.MaxUint64, "attacker")
	for range 100 {
		h.run(step{client: "attacker", args: args("GET k"), ts: attack, want: errp(ErrTimestampSkew)})
	}
	if last := h.eng.clock.Last(); last.Wall > uint64(h.clock.Now().UnixMilli()) {
		t.Fatalf("the refused GETs moved the clock to %v", last)
	}
	// A GET at the very edge of the window is answered but moves nothing.
	edge := h.tsAhead(windowMs, MaxCounter, "attacker")
	h.run(step{client: "attacker", args: args("GET k"), ts: edge, want: bulk("v"), wantTS: true})
	if last := h.eng.clock.Last(); last.Wall > uint64(h.clock.Now().UnixMilli()) {
		t.Fatalf("a read moved the clock to %v", last)
	}
	// The well-behaved client that follows gets a version its clock takes.
	set := h.run(step{client: "good", args: args("SET k w"), want: ok, wantTS: true})
	h.checkWithinWindow("SET after the attack", set.Version)
	if set.Version.Wall != uint64(h.clock.Now().UnixMilli()) {
		t.Fatalf("SET version %v, want the physical clock's millisecond", set.Version)
	}
}

// The same attack from a client allowed to write, repeated at the edge of
// the window while time passes: the clock follows the edge but never
// passes it, however often the counter is pushed to its limit.
func TestAttackWritesAtTheEdgeDoNotRatchet(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{client: "w", args: args("KEYNOTIFY k"), want: ok, wantTS: true})
	for i := range 2000 {
		if i%3 == 0 {
			h.clock.Advance(time.Millisecond)
		}
		var s step
		switch i % 4 {
		case 0:
			s = step{args: args("SET k v"), ts: h.tsAhead(windowMs, MaxCounter, "attacker")}
		case 1:
			s = step{args: args("SET k v"), ts: h.tsAhead(windowMs, MaxCounter-1, "attacker"),
				ft: h.tsAhead(windowMs, MaxCounter, "attacker")}
		case 2:
			s = step{args: args("DEL k"), ts: h.tsAhead(windowMs, MaxCounter, "attacker"),
				ft: h.tsAhead(windowMs, MaxCounter, "attacker")}
		default:
			s = step{args: args("SET k v"), ts: h.tsAhead(59_999, math.MaxUint64, "attacker")}
		}
		res := h.do(s)
		h.checkWithinWindow(fmt.Sprint("attack ", i), res.Version)
		h.checkNotes()
	}
	if last, limit := h.eng.clock.Last(), uint64(h.clock.Now().UnixMilli()+windowMs); last.Wall > limit || last.Counter > MaxCounter+2000 {
		t.Fatalf("clock ran away to %v (window edge %d)", last, limit)
	}
	good := h.run(step{client: "good", args: args("SET other v"), ts: h.tsAhead(0, 0, "good"), want: ok, wantTS: true})
	h.checkWithinWindow("well-behaved SET", good.Version)
	// A client that merged that version sends it back as its __ts: it must
	// be accepted, not refused as too far ahead.
	h.run(step{client: "good", args: args("SET other w"), ts: good.Version.String(), want: ok, wantTS: true})
}

// clockOp is one request of the clock-bound property: a verb, how far
// ahead its stamps are and how much time passes before it.
type clockOp struct {
	verb      string
	tsAheadMs int64
	counter   uint64
	ftAheadMs int64 // math.MinInt64: no __ft
	ftCounter uint64
	advanceMs int64
}

var clockVerbs = []string{"SET k v", "SET k v NX", "SET k v NEX PX 5", "GET k", "DEL k", "VDEL k v", "KEYNOTIFY k", "SCAN *"}

// runClockOps runs ops and checks that every version handed out, and the
// clock itself, stays within the window.
func runClockOps(t *testing.T, ops []clockOp) {
	h := newHarness(t, Config{})
	h.do(step{client: "w", args: args("KEYNOTIFY k")})
	for i, op := range ops {
		h.clock.Advance(time.Duration(op.advanceMs) * time.Millisecond)
		s := step{args: args(op.verb), ts: h.tsAhead(op.tsAheadMs, op.counter, "c")}
		if op.ftAheadMs != math.MinInt64 {
			s.ft = h.tsAhead(op.ftAheadMs, op.ftCounter, "f")
		}
		res := h.do(s)
		h.checkWithinWindow(fmt.Sprintf("op %d %+v", i, op), res.Version)
		h.checkNotes()
		if _, ok := h.eng.Expire(); ok {
			h.checkNotes()
		}
		if last := h.eng.clock.Last(); last.Wall > uint64(h.clock.Now().UnixMilli()+windowMs) {
			t.Fatalf("op %d %+v: clock %v past the window", i, op, last)
		}
	}
}

// TestClockStaysWithinTheWindow runs random sequences of requests whose
// stamps sit on and around every boundary and checks the invariant after
// each one.
func TestClockStaysWithinTheWindow(t *testing.T) {
	aheads := []int64{-3_600_000, -1, 0, 1, windowMs - 1, windowMs, windowMs + 1, 59_999, 60_000, 60_001}
	counters := []uint64{0, 1, MaxCounter - 1, MaxCounter, MaxCounter + 1, math.MaxUint64 - 1, math.MaxUint64}
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 12))
			ops := make([]clockOp, 500)
			for i := range ops {
				ops[i] = clockOp{
					verb:      clockVerbs[r.IntN(len(clockVerbs))],
					tsAheadMs: aheads[r.IntN(len(aheads))],
					counter:   counters[r.IntN(len(counters))],
					ftAheadMs: math.MinInt64,
					advanceMs: int64(r.IntN(3)),
				}
				if r.IntN(2) == 0 {
					ops[i].ftAheadMs = aheads[r.IntN(len(aheads))]
					ops[i].ftCounter = counters[r.IntN(len(counters))]
				}
			}
			runClockOps(t, ops)
		})
	}
}

// FuzzClockWindow decodes raw into requests, 4 bytes each: verb, how far
// ahead the __ts is (relative to the window's edge), which counter, and
// how much time passes; see runClockOps for what is checked.
func FuzzClockWindow(f *testing.F) {
	f.Add([]byte{3, 128, 6, 0, 3, 128, 6, 0})               // the GET attack, twice
	f.Add([]byte{0, 128, 3, 0, 0, 128, 6, 1, 4, 127, 3, 0}) // SETs and a DEL at the edge
	f.Add([]byte{6, 128, 2, 0, 1, 129, 5, 2, 2, 0, 0, 0})
	counters := []uint64{0, 1, MaxCounter - 1, MaxCounter, MaxCounter + 1, math.MaxUint64 - 1, math.MaxUint64}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 4*256 {
			raw = raw[:4*256]
		}
		var ops []clockOp
		for ; len(raw) >= 4; raw = raw[4:] {
			op := clockOp{
				verb: clockVerbs[int(raw[0])%len(clockVerbs)],
				// 128 is the window's edge; each step is 1 ms, and the top
				// bit of the verb byte scales steps to seconds.
				tsAheadMs: windowMs + int64(raw[1]) - 128,
				counter:   counters[int(raw[2])%len(counters)],
				ftAheadMs: math.MinInt64,
				advanceMs: int64(raw[3] % 4),
			}
			if raw[0]&0x80 != 0 {
				op.tsAheadMs = windowMs + (int64(raw[1])-128)*1000
			}
			if raw[0]&0x40 != 0 {
				op.ftAheadMs, op.ftCounter = op.tsAheadMs, op.counter
			}
			ops = append(ops, op)
		}
		runClockOps(t, ops)
	})
}
