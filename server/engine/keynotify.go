package engine

import (
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
)

// keynotify: KEYNOTIFY key [STOP]. Registrations are per (client, key),
// independent of whether the key exists; registering twice is one
// registration. STOP of a registration that does not exist answers :0.
func (e *Engine) keynotify(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 2 && len(args) != 3 {
		return errResult(ErrWrongNumberOfArguments)
	}
	if err := e.lim.keyArg(args[1]); err != "" {
		return errResult(err)
	}
	stop := len(args) == 3
	if stop && string(args[2]) != protocol.OptStop {
		return errResult(ErrSyntax)
	}
	s, err := e.readStamps(req, now, false, false)
	if err != "" {
		return e.stampRefusal(err, req, now)
	}
	if !stop && !e.lim.mayWatch(&e.watch, req.Client, string(args[1])) {
		return errResult(ErrQuotaExceeded)
	}
	version := e.requestTick(s)
	if !stop {
		e.watch.add(req.Client, string(args[1]))
		e.journalWatch(req.Client, string(args[1]), false)
		return Result{Payload: payloadOK, Version: version}
	}
	if !e.watch.remove(req.Client, string(args[1])) {
		return Result{Payload: payloadZero, Version: version}
	}
	e.journalWatch(req.Client, string(args[1]), true)
	return Result{Payload: payloadOK, Version: version}
}
