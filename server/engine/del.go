package engine

import "time"

// del: DEL key. Answers :1 or :0 with a fresh version; the deletion (and
// the DELETE notification) carries that same version.
func (e *Engine) del(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 2 {
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
	if ent == nil {
		return Result{Payload: payloadZero, Version: version}
	}
	if err := e.persistRemove(ent, version); err != "" {
		return errResult(err)
	}
	e.remove(ent, version)
	return Result{Payload: payloadOne, Version: version}
}
