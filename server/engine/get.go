package engine

import (
	"time"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// get: GET key. A hit answers with the key's version as __ts; a miss carries
// none, which is how the Go SDK tells "absent". A request __ts is checked
// like on every command and merged as a read's is (see readStamps); a __ft
// is ignored.
func (e *Engine) get(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 2 {
		return errResult(ErrWrongNumberOfArguments)
	}
	if err := e.lim.keyArg(args[1]); err != "" {
		return errResult(err)
	}
	s, err := e.readStamps(req, now, false, false)
	if err != "" {
		return e.stampRefusal(err, req, now)
	}
	if s.merge {
		e.tick(&s.ts)
	}
	ent := e.keys[string(args[1])]
	if ent == nil {
		return Result{Payload: payloadNull}
	}
	// Sized up front: one allocation for the header, value and CRLF.
	p := make([]byte, 0, len(ent.value)+16)
	return Result{Payload: resp3.AppendBulk(p, ent.value), Version: ent.version}
}
