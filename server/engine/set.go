package engine

import (
	"bytes"
	"math"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// setCond is a SET's condition option.
type setCond uint8

const (
	condNone setCond = iota
	condNX           // only if the key is absent
	condNEX          // only if the key is absent or holds exactly the new value
)

type setOptions struct {
	cond  setCond
	ttl   time.Duration
	hasPX bool
}

// maxPX is the largest PX whose deadline a time.Duration can hold.
const maxPX = math.MaxInt64 / int64(time.Millisecond)

// parseSetOptions reads the options after "SET key value". Each option may
// appear once and in any order; NX with NEX, an unknown or lower-case
// option, and a PX without a positive decimal millisecond count are syntax
// errors.
func parseSetOptions(opts [][]byte) (setOptions, Error) {
	var o setOptions
	for i := 0; i < len(opts); i++ {
		switch string(opts[i]) {
		case protocol.OptNX, protocol.OptNEX:
			if o.cond != condNone {
				return o, ErrSyntax
			}
			o.cond = condNX
			if string(opts[i]) == protocol.OptNEX {
				o.cond = condNEX
			}
		case protocol.OptPX:
			if o.hasPX || i+1 == len(opts) {
				return o, ErrSyntax
			}
			i++
			ms, ok := parseMillis(opts[i])
			if !ok {
				return o, ErrSyntax
			}
			o.ttl, o.hasPX = time.Duration(ms)*time.Millisecond, true
		default:
			return o, ErrSyntax
		}
	}
	return o, ""
}

// parseMillis accepts 1..maxPX written as plain ASCII digits (no sign, no
// spaces, leading zeros allowed).
func parseMillis(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (maxPX-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, n > 0
}

// set: SET key value [NX|NEX] [PX ms].
func (e *Engine) set(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) < 3 {
		return errResult(ErrWrongNumberOfArguments)
	}
	if err := e.lim.keyArg(args[1]); err != "" {
		return errResult(err)
	}
	if e.lim.value > 0 && len(args[2]) > e.lim.value || !e.lim.keptKeyFits(len(args[1]), e.wantDurable(req.Persist)) {
		return errResult(ErrQuotaExceeded)
	}
	opts, err := parseSetOptions(args[3:])
	if err != "" {
		return errResult(err)
	}
	s, err := e.readStamps(req, now, true, true)
	if err != "" {
		return e.stampRefusal(err, req, now)
	}
	ent := e.keys[string(args[1])]
	if err := checkFence(ent, s); err != "" {
		return fenceRefusal(err, ent, s)
	}
	value := args[2]
	if ent != nil && (opts.cond == condNX || opts.cond == condNEX && !bytes.Equal(ent.value, value)) {
		return Result{Payload: payloadMinusOne, Version: e.requestTick(s)}
	}
	if !e.fits(string(args[1]), ent, len(value)) {
		return errResult(ErrQuotaExceeded)
	}
	if ent != nil && req.Transition != nil {
		if err := req.Transition(ent.value, ent.version); err != "" {
			return errResult(err)
		}
	}
	version := e.requestTick(s)
	var fence hlc.HLC
	key := ""
	if ent != nil {
		fence, key = ent.fenceToken(), ent.key
	} else {
		key = string(args[1])
	}
	if s.hasFT && s.ft.Compare(fence) > 0 {
		fence = s.ft
	}
	value = bytes.Clone(value)
	deadline := now.Add(opts.ttl)
	durable := e.persistStore(ent, key, value, version, fence, deadline, opts.hasPX, req.Persist)
	e.store(key, value, version, fence, deadline, opts.hasPX, durable)
	return Result{Payload: payloadOK, Version: version}
}
