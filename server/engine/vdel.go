package engine

import (
	"bytes"
	"time"
)

// vdel: VDEL key value. Deletes the key only if it holds exactly value:
// :1 deleted, :0 absent, :-1 value differs, each with a fresh version. The
// fencing rule applies before the value comparison.
func (e *Engine) vdel(req *Request, now time.Time) Result {
	if len(req.Args) != 3 {
		return errResult(ErrWrongNumberOfArguments)
	}
	value := req.Args[2]
	return e.deleteKey(req, now, func(ent *entry) bool { return !bytes.Equal(ent.value, value) })
}
