package engine

import (
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// stampRefusal answers a request whose __ts or __ft readStamps refused,
// with Result.Why saying what was wrong with the stamp. It runs only on
// that refusal, so the formatting costs nothing on the served path.
func (e *Engine) stampRefusal(err Error, req *Request, now time.Time) Result {
	res := errResult(err)
	switch err {
	case ErrTimestampSkew:
		res.Why = e.driftWhy(protocol.PropTimestamp, req.Timestamp, now)
	case ErrFencingTokenSkew:
		res.Why = e.driftWhy(protocol.PropFencingToken, req.FencingToken, now)
	case ErrMalformedTimestamp:
		res.Why = "a __ts or __ft that is not an HLC (wall:counter:node)"
	case ErrMissingTimestamp:
		res.Why = "SET without a __ts"
	}
	return res
}

func (e *Engine) driftWhy(name, raw string, now time.Time) string {
	h, err := hlc.Parse(raw)
	if len(raw) > 64 { // the client's text: quoted, never whole
		raw = raw[:64] + "…"
	}
	if err != nil {
		return name + " " + raw + " is not an HLC"
	}
	ahead := time.Duration(int64(h.Wall)-now.UnixMilli()) * time.Millisecond
	if ahead <= e.accept {
		return name + " " + raw + " has a counter beyond what this clock accepts at its time"
	}
	return name + " " + raw + " is " + ahead.String() + " ahead of the server clock; at most " + e.accept.String() + " is accepted"
}

// fenceRefusal answers a write the fencing rule refused (checkFence), with
// Result.Why naming the tokens compared.
func fenceRefusal(err Error, ent *entry, s stamps) Result {
	res := errResult(err)
	if ent == nil || !ent.fenced() {
		return res
	}
	if !s.hasFT {
		res.Why = "the key is fenced by token " + ent.meta.fence.String() + " and the request carried no __ft"
		return res
	}
	res.Why = "request __ft " + s.ft.String() + " is lower than the key's fencing token " + ent.meta.fence.String()
	return res
}
