package engine

import (
	"time"

	"github.com/google/btree"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// entry is one stored key. What only some keys have (a fencing token, a
// deadline) hangs off pointers, nil when absent: inline, those 64 bytes put
// entry in the 144-byte size class; as pointers it fits in 96 (48 MB per
// million keys).
type entry struct {
	key     string
	value   []byte
	version hlc.HLC
	fence   *hlc.HLC // nil when the key is not fenced
	ttl     *expiry  // nil when the key never expires
	durable bool     // the key has a record in Config.Journal's store
}

// expiry is the deadline of a key that has one.
type expiry struct {
	deadline time.Time
	index    int // position in the deadline heap
}

func (ent *entry) size() int64 { return int64(len(ent.key) + len(ent.value)) }

// deadline returns the key's deadline, zero when it never expires.
func (ent *entry) deadline() time.Time {
	if ent.ttl == nil {
		return time.Time{}
	}
	return ent.ttl.deadline
}

// fenceToken returns the key's fencing token, zero when it is not fenced.
func (ent *entry) fenceToken() hlc.HLC {
	if ent.fence == nil {
		return hlc.HLC{}
	}
	return *ent.fence
}

// setFence stores token as the key's fencing token (zero unfences it). An
// unchanged token keeps its allocation, so fenced SETs by the same holder
// allocate nothing for it.
func (ent *entry) setFence(token hlc.HLC) {
	switch {
	case token.IsZero():
		ent.fence = nil
	case ent.fence == nil || *ent.fence != token:
		// new, not &token: taking the parameter's address would move it
		// to the heap on every call, fenced or not.
		ent.fence = new(hlc.HLC)
		*ent.fence = token
	}
}

// store puts value under key (both already owned by the engine) with the
// given version, fencing token and optional deadline, keeping the byte
// count and the deadline heap in step, then notifies the key's watchers.
// A change that waits for the journal (e.cur) is remembered for Abandon.
func (e *Engine) store(key string, value []byte, version, fence hlc.HLC, deadline time.Time, hasTTL, durable bool) {
	e.place(key, value, version, fence, deadline, hasTTL, durable)
	e.notifySet(key, version, value)
}

// notifySet notifies the watchers of key of its new value, stamped version.
func (e *Engine) notifySet(key string, version hlc.HLC, value []byte) {
	e.notify(key, version, func(dst []byte) []byte { return resp3.AppendNotifySet(dst, value) })
}

// place is store without the notification.
func (e *Engine) place(key string, value []byte, version, fence hlc.HLC, deadline time.Time, hasTTL, durable bool) {
	ent, ok := e.keys[key]
	e.remember(key, ent)
	if !ok {
		ent = &entry{key: key}
		e.addKey(ent)
	} else {
		e.bytes -= ent.size()
	}
	ent.value, ent.version, ent.durable = value, version, durable
	ent.setFence(fence)
	e.bytes += ent.size()
	e.setDeadline(ent, deadline, hasTTL)
	if e.onChange != nil {
		e.onChange(key, false)
	}
}

// remove deletes ent (which must be stored) and notifies its watchers with
// version.
func (e *Engine) remove(ent *entry, version hlc.HLC) {
	e.remember(ent.key, ent)
	e.dropKey(ent)
	e.bytes -= ent.size()
	e.setDeadline(ent, time.Time{}, false)
	e.notify(ent.key, version, resp3.AppendNotifyDelete)
	if e.onChange != nil {
		e.onChange(ent.key, true)
	}
}

// addKey and dropKey are the only changes of the key space: each keeps
// the map (a key by name) and the ordered index (SCAN) in step.
func (e *Engine) addKey(ent *entry) {
	e.keys[ent.key] = ent
	e.order.insert(ent)
}

func (e *Engine) dropKey(ent *entry) {
	delete(e.keys, ent.key)
	e.order.delete(ent)
}

// keyIndex holds the stored entries in byte-wise order of their keys, so
// that SCAN seeks to its cursor in O(log n) and walks on from there
// instead of sorting the key space. It is a B-tree of entry pointers:
// about 10 bytes per key with the degree below (see BenchmarkHeapMillionKeys).
// The zero value is an empty index.
type keyIndex struct {
	tree  *btree.BTreeG[*entry]
	pivot entry // the search key of seek, reused under the engine's lock
}

// indexDegree is the B-tree's minimum degree: nodes hold 31 to 63 keys,
// a few cache lines of pointers, and a million keys are 4 levels deep.
const indexDegree = 32

func entryLess(a, b *entry) bool { return a.key < b.key }

func (x *keyIndex) insert(ent *entry) {
	if x.tree == nil {
		x.tree = btree.NewG(indexDegree, entryLess)
	}
	x.tree.ReplaceOrInsert(ent)
}

func (x *keyIndex) delete(ent *entry) {
	if x.tree != nil {
		x.tree.Delete(ent)
	}
}

// seek calls visit with each entry whose key is at or after from, in
// order, until visit returns false.
func (x *keyIndex) seek(from string, visit func(*entry) bool) {
	if x.tree == nil {
		return
	}
	x.pivot.key = from
	x.tree.AscendGreaterOrEqual(&x.pivot, visit)
	x.pivot.key = ""
}

// fits reports whether replacing the value of key (old is its entry, or
// nil) by a value of n bytes stays within the quotas.
func (e *Engine) fits(key string, old *entry, n int) bool {
	if old == nil && e.maxKeys > 0 && len(e.keys) >= e.maxKeys {
		return false
	}
	if e.maxBytes > 0 {
		total := e.bytes + int64(len(key)+n)
		if old != nil {
			total -= old.size()
		}
		if total > e.maxBytes {
			return false
		}
	}
	return true
}

// notify hands one notification per watcher of key to Config.OnNotify,
// waiting for what the change waits for (e.cur). The key copy and payload
// are built once and shared by those notifications.
func (e *Engine) notify(key string, version hlc.HLC, payload func([]byte) []byte) {
	clients := e.watch.byKey[key]
	if len(clients) == 0 || e.onNotify == nil {
		return
	}
	k := []byte(key)
	p := payload(nil)
	for _, c := range clients {
		e.onNotify(Notification{Client: c, Key: k, Payload: p, Version: version, Wait: e.cur})
	}
}
