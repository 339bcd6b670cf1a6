package engine

import (
	"bytes"
	"time"
)

// vdel: VDEL key value. Deletes the key only if it holds exactly value:
// :1 deleted, :0 absent, :-1 value differs, each with a fresh version. The
// fencing rule applies before the value comparison.
func (e *Engine) vdel(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 3 {
		return errResult(ErrWrongArgs)
	}
	if err := e.lim.keyArg(args[1]); err != "" {
		return errResult(err)
	}
	s, err := e.readStamps(req, now, false, true)
	if err != "" {
		return errResult(err)
	}
	ent := e.keys[string(args[1])]
	if err := checkFence(ent, s); err != "" {
		return errResult(err)
	}
	version := e.requestTick(s)
	switch {
	case ent == nil:
		return Result{Payload: payloadZero, Version: version}
	case !bytes.Equal(ent.value, args[2]):
		return Result{Payload: payloadMinusOne, Version: version}
	}
	if err := e.persistRemove(ent, version); err != "" {
		return errResult(err)
	}
	e.remove(ent, version)
	return Result{Payload: payloadOne, Version: version}
}
