package engine

import (
	"slices"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// Journal is the durable side of the store, written in groups (group
// commit): many writes share one transaction and one fsync, while the
// engine goes on serving.
//
// The engine numbers the writes that touch a kept key 1, 2, 3, … and
// calls Append with each one's number and changes, under its lock, in
// that order, before applying them in memory. Append must not block and
// must not call back into the engine. The slice is only valid during the
// call (the journal copies the Changes it keeps; their Values are
// read-only and may be kept). The
// journal writes them in number order, as many per transaction as have
// come, and reports each transaction back:
//
//   - Engine.Durable(hi) once every change numbered up to hi is on disk;
//   - Engine.Abandon(lo) when the transaction holding lo (its first) failed.
//     The engine undoes that change and every later one in memory and
//     returns the last number it handed out; the journal writes none of
//     them and fails their waits.
//
// Wait(seq) blocks until seq was covered by one of the two: nil after
// Durable, an error after Abandon.
//
// Meanwhile every change is in memory at once, so later requests are
// decided on top of it exactly as if it were on disk, and its key is
// pending until Durable. An answer about a pending key (and a SCAN while
// any key is pending) carries Result.Wait, a notification of its change
// Notification.Wait: no client learns of a change a crash could still
// take back. A request on a key with nothing pending, and every request
// that touches no kept key, waits for nothing. When a transaction fails,
// the changes undone are exactly the ones whose answers and notifications
// were still held, and those requests are answered ErrPersistence: a
// refused request changed nothing. Two things are not revisited: a quota
// refusal that counted a change later undone, and an expiry (its record's
// deadline has passed, so Restore drops it anyway).
type Journal interface {
	Append(seq uint64, changes []Change)
	Wait(seq uint64) error
}

// unsettled is the engine's view of what its Journal has not yet made
// durable. Everything in it is guarded by Engine.mu.
type unsettled struct {
	seq     uint64            // the last number handed to the journal
	durable uint64            // the highest number Durable reported
	pending map[string]uint64 // key -> number of its newest change not yet durable
	top     uint64            // the highest number in pending, when it is not empty
	// undo holds the state before every change made to a pending key,
	// oldest first, until the change it waits for is settled.
	undo []undo
	// cur is what the change being made waits for (0: nothing): set per
	// request (dependsOn, then the request's own journal entry) and per
	// expired key.
	cur uint64
	// one passes a request's single change to Append without allocating.
	one [1]Change
}

// undo is a key's state before one change, and the number the change
// waits for (tag).
type undo struct {
	tag      uint64
	pending  uint64 // the key's entry in unsettled.pending before the change
	key      string
	had      bool // the key existed
	durable  bool
	hasTTL   bool
	value    []byte
	version  hlc.HLC
	fence    hlc.HLC
	deadline time.Time
}

// dependsOn is what a request's answer waits for before it changes
// anything: the pending change of its key, or for SCAN the newest pending
// change of any key. KEYNOTIFY reveals nothing of the key.
func (e *Engine) dependsOn(args [][]byte) uint64 {
	if len(e.pending) == 0 || len(args) < 2 {
		return 0
	}
	switch string(args[0]) {
	case protocol.VerbScan:
		return e.top
	case protocol.VerbKeyNotify:
		return 0
	}
	return e.pending[string(args[1])]
}

// journalChange hands the journal one change of key; the request making
// it now waits for it, and the change (store or remove, which follows)
// makes the key pending.
func (e *Engine) journalChange(key string, c Change) {
	e.seq++
	e.one[0] = c
	e.journal.Append(e.seq, e.one[:])
	e.one[0] = Change{}
	e.cur = e.seq
}

// remember is called before every change of a key. When the change waits
// for something (e.cur), it keeps the key's state (ent nil: absent) so
// that Abandon can put it back, and marks the key pending until then.
func (e *Engine) remember(key string, ent *entry) {
	if e.cur == 0 {
		return
	}
	u := undo{tag: e.cur, pending: e.pending[key], key: key}
	if e.cur > u.pending {
		e.pending[key] = e.cur
		e.top = max(e.top, e.cur)
	}
	if ent != nil {
		u.had, u.durable = true, ent.durable()
		u.value, u.version, u.fence = ent.value, ent.version, ent.fenceToken()
		u.deadline, u.hasTTL = ent.deadline(), ent.hasTTL()
	}
	e.undo = append(e.undo, u)
}

// Durable tells the engine that every change numbered up to seq is on
// disk: their keys are no longer pending, and what depended on them
// waits no more.
func (e *Engine) Durable(seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.durable = max(e.durable, seq)
	for k, s := range e.pending {
		if s <= seq {
			delete(e.pending, k)
		}
	}
	e.undo = slices.DeleteFunc(e.undo, func(u undo) bool { return u.tag <= seq })
}

// Abandon undoes in memory, newest first, the change numbered seq and
// every change made after it that waits for it or for a later one (they
// were all decided on top of it), without notifications: the
// notifications of those changes were held and are dropped. It returns
// the last number handed to the journal; the journal must write none of
// seq up to that one. Versions handed out meanwhile are not reused.
func (e *Engine) Abandon(seq uint64) (last uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.undo) - 1; i >= 0; i-- {
		if e.undo[i].tag >= seq {
			e.revert(&e.undo[i])
		}
	}
	e.undo = slices.DeleteFunc(e.undo, func(u undo) bool { return u.tag >= seq })
	e.top = 0
	for k, s := range e.pending {
		if s >= seq {
			delete(e.pending, k)
		} else {
			e.top = max(e.top, s)
		}
	}
	return e.seq
}

// revert puts a key back in the state u kept, keeping the byte count,
// the ordered index and the deadline heap in step, and pending on what it
// waited for before.
func (e *Engine) revert(u *undo) {
	if e.onChange != nil {
		defer e.onChange(u.key, !u.had)
	}
	if u.pending > e.durable {
		e.pending[u.key] = u.pending
	} else {
		delete(e.pending, u.key)
	}
	ent := e.keys[u.key]
	if !u.had {
		if ent != nil {
			e.dropKey(ent)
			e.bytes -= ent.size()
			e.setDeadline(ent, time.Time{}, false)
		}
		return
	}
	if ent == nil {
		ent = &entry{key: u.key}
		e.addKey(ent)
	} else {
		e.bytes -= ent.size()
	}
	ent.value, ent.version = u.value, u.version
	ent.setDurable(u.durable)
	ent.setFence(u.fence)
	e.bytes += ent.size()
	e.setDeadline(ent, u.deadline, u.hasTTL)
}
