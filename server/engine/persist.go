package engine

import (
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// Record is the durable form of one key: everything a restart needs to
// answer for it exactly as before. Deadline is absolute, so a key keeps
// expiring at the same instant whatever the downtime.
type Record struct {
	Key      string
	Value    []byte    // read-only: shared with the engine
	Version  hlc.HLC   // the version SET assigned
	Fence    hlc.HLC   // zero when the key is not fenced
	Deadline time.Time // zero when the key never expires
}

// Change is one mutation of the durable copy of the store: a put of
// Record, or (Delete) the removal of the record of Record.Key. Version is
// the change's version in both cases, so the durable side can remember the
// highest version ever handed out, deletions included.
type Change struct {
	Record
	Delete bool
	// Watch, only with Config.JournalWatches, makes the change a KEYNOTIFY
	// registration of the client Watch for Record.Key (Delete: its
	// removal; Delete with an empty Key: the removal of every registration
	// of the client, when it disconnects). Record's other fields are zero.
	Watch string
}

// wantDurable reports whether a write requested with persist should be
// kept on disk.
func (e *Engine) wantDurable(persist bool) bool {
	return e.journal != nil && (persist || e.persistAll)
}

// persistStore hands the journal the change that makes a store of key
// durable, or removes the key's durable record when the new value is not
// to be kept (so that a restart cannot resurrect the older value). It
// returns whether the stored entry is durable. Nothing is written when
// neither the old nor the new value is durable.
func (e *Engine) persistStore(old *entry, key string, value []byte, version, fence hlc.HLC, deadline time.Time, hasTTL, persist bool) bool {
	want := e.wantDurable(persist)
	if !want && (old == nil || !old.durable()) {
		return false
	}
	c := Change{Record: Record{Key: key, Version: version}}
	if want {
		c.Value, c.Fence = value, fence
		if hasTTL {
			c.Deadline = deadline
		}
	} else {
		c.Delete = true
	}
	e.journalChange(key, c)
	return want
}

// persistRemove hands the journal the deletion of the durable record of
// ent, if it has one, before ent is removed from memory.
func (e *Engine) persistRemove(ent *entry, version hlc.HLC) {
	if ent.durable() && e.journal != nil {
		e.journalChange(ent.key, Change{Record: Record{Key: ent.key, Version: version}, Delete: true})
	}
}

// journalWatch hands the journal a change of client's registration for
// key (Config.JournalWatches); the KEYNOTIFY making it waits for it. It is
// not undone by Abandon: a replicated store whose commit fails stops
// serving from this engine.
func (e *Engine) journalWatch(client, key string, stop bool) {
	if !e.journalWatches || e.journal == nil || client == "" {
		return // a change without a client would read as a key's
	}
	e.journalChange(key, Change{Record: Record{Key: key}, Delete: stop, Watch: client})
}

// RestoreWatch registers client for key in an engine that has not served
// yet (a registration loaded from a replicated store), outside the quotas.
func (e *Engine) RestoreWatch(client, key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.watch.add(client, key)
}

// NotifyCurrent sends every KEYNOTIFY registration one notification of
// its key's state now: NOTIFY SET with the value (its version as __ts),
// or NOTIFY DELETE when the key is absent. A server on a replicated store
// calls it each time it attaches to the broker, before it takes requests:
// a change its predecessor committed but died before notifying reaches
// the watchers this way, ahead of any later change (a resync: a watcher
// may see a state it already knew once more).
func (e *Engine) NotifyCurrent() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	for key := range e.watch.byKey {
		// A state not yet durable is told once it is (Notification.Wait).
		e.cur = e.pending[key]
		if ent, ok := e.keys[key]; ok {
			e.notifySet(key, ent.version, ent.value)
		} else {
			e.notify(key, e.tick(nil), resp3.AppendNotifyDelete)
		}
	}
	e.cur = 0
}

// ClockLast is the clock's latest value: every version and timestamp the
// engine handed out so far is at most it.
func (e *Engine) ClockLast() hlc.HLC {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock.Last()
}

// Reserve makes room for n keys in an engine about to Restore them, so
// that loading a large store does not grow the key map step by step. It
// does nothing once the engine holds keys.
func (e *Engine) Reserve(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.keys) == 0 && n > 0 {
		e.keys = make(map[string]*entry, n)
	}
}

// Restore loads the durable records into an engine that has not served
// yet: each record becomes a key (marked durable, so later changes keep
// its record in step), without notifications and outside the quotas. A
// record whose deadline is not after now is skipped and its key returned,
// so the caller can delete it from disk. The clock is moved past floor and
// past every restored version and fencing token, so versions assigned
// from now on sort after every version handed out before the restart.
func (e *Engine) Restore(recs []Record, floor hlc.HLC) (expired []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	top := floor
	for _, r := range recs {
		if r.Version.Compare(top) > 0 {
			top = r.Version
		}
		if r.Fence.Compare(top) > 0 {
			top = r.Fence
		}
		if !r.Deadline.IsZero() && !r.Deadline.After(now) {
			expired = append(expired, r.Key)
			continue
		}
		if len(r.Key) == 0 {
			continue
		}
		ent, ok := e.keys[r.Key]
		if ok {
			e.bytes -= ent.size()
		} else {
			ent = &entry{key: r.Key}
			e.addKey(ent)
		}
		ent.value, ent.version = r.Value, r.Version
		ent.setDurable(true)
		ent.setFence(r.Fence)
		e.bytes += ent.size()
		e.setDeadline(ent, r.Deadline, !r.Deadline.IsZero())
	}
	e.passClock(top)
	return expired
}

// passClock makes the clock's next values greater than top. A top within
// the clock's drift bound is merged as a received clock would be; one
// beyond it (the physical clock went back while the service was down) is
// honoured by a clock whose physical source never reads earlier than the
// millisecond after top.
func (e *Engine) passClock(top hlc.HLC) {
	if top.IsZero() {
		return
	}
	if _, err := e.clock.Update(top); err == nil {
		return
	}
	floor := time.UnixMilli(int64(top.Wall) + 1)
	now := e.now
	e.clock = hlc.NewClock(e.clock.Node(),
		hlc.WithNow(func() time.Time {
			if t := now(); t.After(floor) {
				return t
			}
			return floor
		}),
		hlc.WithMaxDrift(e.clock.MaxDrift()))
}
