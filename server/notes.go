package server

import "sync"

// noteOrder makes a server on a replica publish a write's notifications
// before its answer (Options.Replica): a leader killed between the two
// then loses the answer, never the notification of an acknowledged
// change. It counts the notifications queued for each journal number and
// lets an answer waiting for number n out once those of n are published
// or dropped.
//
// Only notifications whose number is the highest queued so far are
// counted: those of the write being decided (and of a state it depends
// on). No notification ahead of them in a watcher's queue waits for a
// later number, so they are published once their number is settled and
// waiting for them cannot deadlock with the group commit's releaser.
// Notifications that re-tell a state pending for an older number
// (Engine.NotifyCurrent, expiry) answer no request and are not counted.
type noteOrder struct {
	mu     sync.Mutex
	cond   *sync.Cond
	top    uint64         // the highest number counted so far
	queued map[uint64]int // number -> counted notifications not yet out
	closed bool           // the server is closing: nothing waits
}

func newNoteOrder() *noteOrder {
	o := &noteOrder{queued: map[uint64]int{}}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// add is told of a notification as it is queued (under the engine's
// lock, so in the engine's order); it reports whether it was counted, so
// that done is called for it once it is published or dropped.
func (o *noteOrder) add(wait uint64) bool {
	if wait == 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if wait < o.top || o.closed {
		return false
	}
	o.top = wait
	o.queued[wait]++
	return true
}

// done is told that a counted notification of number wait is out.
func (o *noteOrder) done(wait uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.queued[wait]--; o.queued[wait] <= 0 {
		delete(o.queued, wait)
		o.cond.Broadcast()
	}
}

// await returns once the counted notifications of number wait are out,
// or the server is closing.
func (o *noteOrder) await(wait uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.queued[wait] > 0 && !o.closed {
		o.cond.Wait()
	}
}

// close releases every wait: the notification queues may discard what
// they still hold.
func (o *noteOrder) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.cond.Broadcast()
}
