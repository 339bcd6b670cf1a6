package schemacheck

import (
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// TransitionsCounting is Transitions with a count of the replaced values
// it decoded inside the engine's lock and by Learn (outside it).
func TransitionsCounting(sc *schema.Schema) (check func(key, value []byte) *server.Transition, decodes func() (locked, learned int64)) {
	t := newTransitions(sc)
	return t.check, func() (int64, int64) { return t.lockedDecodes.Load(), t.learnedDecodes.Load() }
}

// MaxLockedDecode is the largest replaced value decoded inside the lock.
const MaxLockedDecode = maxLockedDecode
