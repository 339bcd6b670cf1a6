package engine

import (
	"bytes"
	"slices"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// PutOptions are the metadata of a key seeded with Put.
type PutOptions struct {
	// Version is the key's version; zero means a fresh tick of the engine
	// clock. A given version is also merged into the clock (when within
	// twice MaxDrift of it) so that later versions sort after it.
	Version hlc.HLC
	// FencingToken fences the key; zero leaves it unfenced.
	FencingToken hlc.HLC
	// TTL makes the key expire TTL after now; zero (or negative) keeps it.
	TTL time.Duration
	// Persist keeps the key durable, as Request.Persist does for a SET.
	Persist bool
}

// Entry is a snapshot of one stored key.
type Entry struct {
	Value        []byte    // a copy of the value
	Version      hlc.HLC   // the version SET assigned (what GET returns)
	FencingToken hlc.HLC   // zero when the key is not fenced
	Deadline     time.Time // zero when the key never expires
	Durable      bool      // the key is kept on disk (Config.Persist)
}

// Put stores a key directly, bypassing the protocol checks (timestamps,
// fencing, conditions) but not the quotas: it returns ErrQuotaExceeded,
// ErrKeyLengthZero or ErrPersistence and changes nothing in those cases.
// Watchers of the key are notified as for a SET. It is meant for seeding
// tests and for Go callers embedding the store. Like Handle, it returns
// once the change is durable, when it is kept.
func (e *Engine) Put(key, value []byte, opts PutOptions) error {
	if len(key) == 0 {
		return ErrKeyLengthZero
	}
	wait, err := e.put(key, value, opts)
	if err == nil && wait != 0 && e.journal.Wait(wait) != nil {
		return ErrPersistence
	}
	return err
}

// put is Put up to the wait for the journal, under the lock.
func (e *Engine) put(key, value []byte, opts PutOptions) (wait uint64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.reap(now)
	e.cur = e.pending[string(key)]
	defer func() { e.cur = 0 }()
	ent := e.keys[string(key)]
	if !e.fits(string(key), ent, len(value)) || !e.lim.keptKeyFits(len(key), e.wantDurable(opts.Persist)) {
		return 0, ErrQuotaExceeded
	}
	version := opts.Version
	if version.IsZero() {
		version = e.tick(nil)
	} else {
		// Best effort: a version too far ahead is stored but not merged.
		_, _ = e.clock.Update(version)
	}
	k := string(key)
	if ent != nil {
		k = ent.key
	}
	value = bytes.Clone(value)
	deadline := now.Add(opts.TTL)
	durable := e.persistStore(ent, k, value, version, opts.FencingToken, deadline, opts.TTL > 0, opts.Persist)
	e.store(k, value, version, opts.FencingToken, deadline, opts.TTL > 0, durable)
	return e.cur, nil
}

// Delete removes a key as an unconditional, unfenced DEL would, notifying
// its watchers, and reports whether it existed (false, with the key left
// as it was, when the deletion of its record failed).
func (e *Engine) Delete(key []byte) bool {
	wait, found := e.delete(key)
	return found && (wait == 0 || e.journal.Wait(wait) == nil)
}

// delete is Delete up to the wait for the journal, under the lock.
func (e *Engine) delete(key []byte) (wait uint64, found bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	ent := e.keys[string(key)]
	if ent == nil {
		return 0, false
	}
	e.cur = e.pending[ent.key]
	version := e.tick(nil)
	e.persistRemove(ent, version)
	e.remove(ent, version)
	wait, e.cur = e.cur, 0
	return wait, true
}

// Lookup returns a snapshot of key. Like every access it first expires the
// keys that are due, so an expired key is never returned.
func (e *Engine) Lookup(key []byte) (Entry, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	ent := e.keys[string(key)]
	if ent == nil {
		return Entry{}, false
	}
	return Entry{
		Value:        bytes.Clone(ent.value),
		Version:      ent.version,
		FencingToken: ent.fenceToken(),
		Deadline:     ent.deadline(),
		Durable:      ent.durable(),
	}, true
}

// Len returns the number of live keys.
func (e *Engine) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	return len(e.keys)
}

// Bytes returns the quota's measure of the store: the sum of key and value
// lengths over live keys.
func (e *Engine) Bytes() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	return e.bytes
}

// Keys returns the live keys in byte-wise order.
func (e *Engine) Keys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	ks := make([]string, 0, len(e.keys))
	e.order.seek("", func(ent *entry) bool {
		ks = append(ks, ent.key)
		return true
	})
	return ks
}

// Watchers returns the clients registered for key, in registration order
// (the order their notifications are delivered in).
func (e *Engine) Watchers(key []byte) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.watch.byKey[string(key)])
}

// WatchCount returns the number of KEYNOTIFY registrations, all clients
// together.
func (e *Engine) WatchCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.watch.total
}

// WatchBytes returns the sum of the lengths of the keys of all KEYNOTIFY
// registrations (what Config.MaxWatchBytes bounds).
func (e *Engine) WatchBytes() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.watch.totalBytes
}

// Watching returns how many keys client is registered for, and up to max
// of them in byte-wise order (all when max is 0, none when it is
// negative).
func (e *Engine) Watching(client string, max int) (int, []string) {
	e.mu.Lock()
	keys := e.watch.byClient[client]
	n := len(keys)
	if max < 0 {
		e.mu.Unlock()
		return n, nil
	}
	out := make([]string, 0, n)
	for k := range keys {
		out = append(out, k)
	}
	e.mu.Unlock()
	slices.Sort(out)
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return n, out
}
