package runtime

import (
	"context"
	"sync"
)

// semaphore bounds the requests in flight. Its limit follows the broker's
// Receive Maximum, which can change with every connection, so waiters are
// granted in FIFO order whenever a slot frees or the limit grows.
type semaphore struct {
	mu      sync.Mutex
	limit   int
	used    int
	waiters []chan struct{} // closed when granted
}

func newSemaphore(limit int) *semaphore { return &semaphore{limit: max(limit, 1)} }

// acquire takes a slot, or returns ctx's error, or errAbort when abort is
// closed first.
func (s *semaphore) acquire(ctx context.Context, abort <-chan struct{}) error {
	s.mu.Lock()
	if s.used < s.limit && len(s.waiters) == 0 {
		s.used++
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()

	var err error
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-abort:
		err = ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch: // granted while we were giving up: hand the slot on
		s.used--
		s.grantLocked()
		return err
	default:
	}
	for i, w := range s.waiters {
		if w == ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			break
		}
	}
	return err
}

func (s *semaphore) release() {
	s.mu.Lock()
	s.used--
	s.grantLocked()
	s.mu.Unlock()
}

// setLimit changes the bound; slots already taken stay taken.
func (s *semaphore) setLimit(n int) {
	s.mu.Lock()
	s.limit = max(n, 1)
	s.grantLocked()
	s.mu.Unlock()
}

func (s *semaphore) grantLocked() {
	for s.used < s.limit && len(s.waiters) > 0 {
		close(s.waiters[0])
		s.waiters[0] = nil
		s.waiters = s.waiters[1:]
		s.used++
	}
}

func (s *semaphore) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}
