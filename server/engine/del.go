package engine

import "time"

// del: DEL key. Answers :1 or :0 with a fresh version; the deletion (and
// the DELETE notification) carries that same version.
func (e *Engine) del(req *Request, now time.Time) Result {
	if len(req.Args) != 2 {
		return errResult(ErrWrongNumberOfArguments)
	}
	return e.deleteKey(req, now, nil)
}

// deleteKey is what DEL and VDEL share: the key, timestamp and fencing
// checks, a fresh version, and the deletion itself. keep, when not nil,
// vetoes the deletion of an existing entry (VDEL's value comparison) and
// makes the answer :-1; it runs after the fencing check, as on the service.
func (e *Engine) deleteKey(req *Request, now time.Time, keep func(*entry) bool) Result {
	key := req.Args[1]
	if err := e.lim.keyArg(key); err != "" {
		return errResult(err)
	}
	s, err := e.readStamps(req, now, false, true)
	if err != "" {
		return e.stampRefusal(err, req, now)
	}
	ent := e.keys[string(key)]
	if err := checkFence(ent, s); err != "" {
		return fenceRefusal(err, ent, s)
	}
	version := e.requestTick(s)
	switch {
	case ent == nil:
		return Result{Payload: payloadZero, Version: version}
	case keep != nil && keep(ent):
		return Result{Payload: payloadMinusOne, Version: version}
	}
	e.persistRemove(ent, version)
	e.remove(ent, version)
	return Result{Payload: payloadOne, Version: version}
}
