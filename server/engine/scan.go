package engine

import (
	"time"
)

// scan: SCAN glob [token]. Stubbed until the beta command is implemented.
func (e *Engine) scan(req *Request, now time.Time) Result {
	return errResult(ErrUnknownCommand)
}
