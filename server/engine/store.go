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
	// meta is nil for a key with no fencing token, no deadline and no
	// durable record, and the shared durableOnly for a durable key with
	// neither: most keys then cost 80 bytes here instead of 96 (a
	// million restored keys, 16 MB).
	meta *entryMeta
}

// entryMeta is what a key has besides its value and version. Only
// entry's methods and the deadline heap touch it; durableOnly is shared
// and never written (own makes a key's own copy first).
type entryMeta struct {
	fence   hlc.HLC // zero: not fenced
	ttl     expiry  // valid when hasTTL
	hasTTL  bool
	durable bool // the key has a record in Config.Journal's store
}

var durableOnly = &entryMeta{durable: true}

// expiry is the deadline of a key that has one.
type expiry struct {
	deadline time.Time
	index    int // position in the deadline heap
}

func (ent *entry) size() int64 { return int64(len(ent.key) + len(ent.value)) }

// own returns ent's meta for writing: its own, never the shared one.
func (ent *entry) own() *entryMeta {
	switch ent.meta {
	case nil:
		ent.meta = new(entryMeta)
	case durableOnly:
		ent.meta = &entryMeta{durable: true}
	}
	return ent.meta
}

// settle drops a meta that holds nothing but (or not even) durable.
func (ent *entry) settle() {
	m := ent.meta
	if m == nil || m == durableOnly || m.hasTTL || !m.fence.IsZero() {
		return
	}
	if m.durable {
		ent.meta = durableOnly
	} else {
		ent.meta = nil
	}
}

// durable reports whether the key has a record in Config.Journal's store.
func (ent *entry) durable() bool { return ent.meta != nil && ent.meta.durable }

// setDurable allocates nothing for a key that has no token or deadline
// (a restored key, most kept SETs).
func (ent *entry) setDurable(d bool) {
	switch {
	case ent.durable() == d:
	case ent.meta == nil: // and d
		ent.meta = durableOnly
	case ent.meta == durableOnly: // and !d
		ent.meta = nil
	default:
		ent.meta.durable = d
		ent.settle()
	}
}

// hasTTL reports whether the key has a deadline (and is in the heap).
func (ent *entry) hasTTL() bool { return ent.meta != nil && ent.meta.hasTTL }

// deadline returns the key's deadline, zero when it never expires.
func (ent *entry) deadline() time.Time {
	if !ent.hasTTL() {
		return time.Time{}
	}
	return ent.meta.ttl.deadline
}

// fenced reports whether the key has a fencing token.
func (ent *entry) fenced() bool { return ent.meta != nil && !ent.meta.fence.IsZero() }

// fenceToken returns the key's fencing token, zero when it is not fenced.
func (ent *entry) fenceToken() hlc.HLC {
	if ent.meta == nil {
		return hlc.HLC{}
	}
	return ent.meta.fence
}

// setFence stores token as the key's fencing token (zero unfences it). An
// unchanged token changes nothing, so fenced SETs by the same holder
// allocate nothing for it.
func (ent *entry) setFence(token hlc.HLC) {
	if ent.fenceToken() == token {
		return
	}
	ent.own().fence = token
	ent.settle()
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
	ent.value, ent.version = value, version
	ent.setDurable(durable)
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
