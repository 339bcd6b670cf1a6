package console

import (
	"sync"
	"sync/atomic"
)

// ring is a fixed array of the last len(slots) records, written by the
// request path and read by the console's streams. A writer takes a
// sequence number with one atomic add and fills its slot under that
// slot's own lock, so writers contend only when they are len(slots)
// apart, and a reader never makes a writer wait longer than one slot copy.
// Memory is fixed at creation: records reuse their slot's buffers.
type ring[T any] struct {
	head  atomic.Uint64 // sequence number of the next record
	slots []slot[T]
}

type slot[T any] struct {
	mu  sync.Mutex
	seq uint64 // sequence number + 1 of the record held; 0: never written
	v   T
}

func newRing[T any](n int) *ring[T] {
	return &ring[T]{slots: make([]slot[T], n)}
}

// begin claims the next record: it returns the slot's value, locked, to
// be filled in place, and must be followed by end.
func (r *ring[T]) begin() (*slot[T], uint64) {
	seq := r.head.Add(1) - 1
	s := &r.slots[seq%uint64(len(r.slots))]
	s.mu.Lock()
	return s, seq
}

// end publishes the record begin claimed.
func (s *slot[T]) end(seq uint64) {
	s.seq = seq + 1
	s.mu.Unlock()
}

// read calls fn with each record from sequence number from on, in order,
// until fn returns false or the records written so far are read; it
// returns the sequence number to read from next and how many records
// were lost because writers lapped the reader. A record claimed but not
// yet written stops the read (it is read next time), so records are never
// skipped while they are being written.
func (r *ring[T]) read(from uint64, fn func(seq uint64, v *T) bool) (next, lost uint64) {
	head := r.head.Load()
	n := uint64(len(r.slots))
	if head > n && from < head-n {
		lost = head - n - from
		from = head - n
	}
	for ; from < head; from++ {
		s := &r.slots[from%n]
		s.mu.Lock()
		switch {
		case s.seq < from+1: // claimed, not written yet
			s.mu.Unlock()
			return from, lost
		case s.seq > from+1: // lapped while we read
			s.mu.Unlock()
			lost++
			continue
		}
		ok := fn(from, &s.v)
		s.mu.Unlock()
		if !ok {
			return from + 1, lost
		}
	}
	return from, lost
}

// next is the sequence number the next record will get.
func (r *ring[T]) next() uint64 { return r.head.Load() }
