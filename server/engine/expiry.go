package engine

import (
	"container/heap"
	"context"
	"time"
)

// deadlineHeap orders the keys that have a deadline, earliest first, so that
// expiry costs O(log n) per expired key and never scans the store.
type deadlineHeap []*entry

func (h deadlineHeap) Len() int { return len(h) }
func (h deadlineHeap) Less(i, j int) bool {
	return h[i].meta.ttl.deadline.Before(h[j].meta.ttl.deadline)
}
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].meta.ttl.index, h[j].meta.ttl.index = i, j
}
func (h *deadlineHeap) Push(x any) {
	ent := x.(*entry)
	ent.meta.ttl.index = len(*h)
	*h = append(*h, ent)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	ent := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	ent.meta.ttl.index = -1
	return ent
}

// setDeadline gives ent the deadline d (or none), moving it in or out of
// the heap, and wakes Run when the earliest deadline moved earlier.
func (e *Engine) setDeadline(ent *entry, d time.Time, has bool) {
	var before time.Time
	if len(e.deadline) > 0 {
		before = e.deadline[0].meta.ttl.deadline
	}
	switch {
	case !has:
		if ent.hasTTL() {
			heap.Remove(&e.deadline, ent.meta.ttl.index)
			ent.meta.ttl, ent.meta.hasTTL = expiry{}, false
			ent.settle()
		}
		return
	case ent.hasTTL():
		ent.meta.ttl.deadline = d
		heap.Fix(&e.deadline, ent.meta.ttl.index)
	default:
		m := ent.own()
		m.ttl, m.hasTTL = expiry{deadline: d}, true
		heap.Push(&e.deadline, ent)
	}
	if e.deadline[0] == ent && (before.IsZero() || d.Before(before)) {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// reap deletes every key whose deadline is at or before now, earliest
// first, notifying each key's watchers with a fresh version.
//
// The deletions of durable records go to the journal in one entry, after
// the keys are gone from memory. An expiry is final: it is not undone when
// that entry fails (each record's deadline has passed and Restore drops
// it), except as part of undoing a pending change of the key it expires,
// which its notification then waits for.
func (e *Engine) reap(now time.Time) {
	var gone []Change
	for len(e.deadline) > 0 && !e.deadline[0].meta.ttl.deadline.After(now) {
		ent, version := e.deadline[0], e.tick(nil)
		if ent.durable() && e.journal != nil {
			gone = append(gone, Change{Record: Record{Key: ent.key, Version: version}, Delete: true})
		}
		e.cur = e.pending[ent.key]
		e.remove(ent, version)
	}
	e.cur = 0
	if len(gone) > 0 {
		e.seq++
		e.journal.Append(e.seq, gone)
	}
}

// Expire deletes every key whose deadline has passed (emitting DELETE
// notifications) and returns the earliest remaining deadline, if any.
func (e *Engine) Expire() (next time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reap(e.now())
	if len(e.deadline) == 0 {
		return time.Time{}, false
	}
	return e.deadline[0].meta.ttl.deadline, true
}

// Run expires keys at their deadlines until ctx is done. It sleeps on a
// real timer until the earliest deadline (measured on Config.Now) and wakes
// early when a request sets an earlier one. Run at most one per engine;
// without Run, keys still expire when a request or inspection finds them
// due.
func (e *Engine) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, ok := e.Expire()
		timer.Stop()
		var fire <-chan time.Time
		if ok {
			timer.Reset(max(next.Sub(e.now()), 0))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-fire:
		}
	}
}
