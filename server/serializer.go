package server

import (
	"sync"
	"sync/atomic"
)

// serializer runs items in order per key, different keys concurrently, and
// never blocks the caller of push. The engine pushes notifications under
// its lock (keyed by watching client) and the external transport pushes
// requests from paho's delivery goroutine (keyed by requesting client):
// neither may wait. Each key with pending items has one goroutine
// draining its queue, so a slow client delays only its own items.
//
// Notifications are queued without bound on purpose: dropping one would
// break the promise that no change of a watched key goes unnoticed while
// the client is connected. Requests have a budget (limit): what no
// answer can be waited for beyond it is dropped, as a broker drops what a
// client sends past its Receive Maximum.
type serializer[T any] struct {
	run func(T)
	// limit, when set, bounds what is queued; discard makes close drop
	// what has not run yet instead of running it.
	limit   *serialLimit[T]
	discard bool

	mu       sync.Mutex
	queues   map[string]*queue[T]
	bytes    int64 // limit.size of every item pushed and not yet run
	closed   bool
	stopping atomic.Bool // close began and discard is set
	wg       sync.WaitGroup
}

// serialLimit is a serializer's budget of items pushed and not yet run:
// at most perKey items and perKeyBytes bytes (by size) of one key, total
// bytes of all keys, and keys keys with items (each has a goroutine).
type serialLimit[T any] struct {
	perKey      int
	perKeyBytes int64
	total       int64
	keys        int
	size        func(T) int64
}

type queue[T any] struct {
	items []T
	n     int   // items pushed and not yet run, the running batch included
	bytes int64 // their size, with a limit
}

func newSerializer[T any](run func(T)) *serializer[T] {
	return &serializer[T]{run: run, queues: make(map[string]*queue[T])}
}

// push queues item behind the earlier items of key. After close it
// discards the item; beyond the limit too, and then reports full.
func (s *serializer[T]) push(key string, item T) (full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	q, running := s.queues[key]
	var sz int64
	if l := s.limit; l != nil {
		sz = l.size(item)
		if running && (q.n >= l.perKey || q.bytes+sz > l.perKeyBytes) || !running && len(s.queues) >= l.keys || s.bytes+sz > l.total {
			return true
		}
		s.bytes += sz
	}
	if !running {
		q = &queue[T]{}
		s.queues[key] = q
		s.wg.Add(1)
		go s.drain(key, q)
	}
	q.items = append(q.items, item)
	q.n++
	q.bytes += sz
	return false
}

func (s *serializer[T]) drain(key string, q *queue[T]) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		batch := q.items
		q.items = nil
		if len(batch) == 0 {
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, it := range batch {
			if !s.stopping.Load() {
				s.run(it)
			}
			s.mu.Lock()
			q.n--
			if s.limit != nil {
				sz := s.limit.size(it)
				s.bytes -= sz
				q.bytes -= sz
			}
			s.mu.Unlock()
		}
	}
}

// close discards further pushes and waits until the queued items have run
// (run must give up quickly once the server is closing), or with discard,
// until the items running have.
func (s *serializer[T]) close() {
	s.mu.Lock()
	s.closed = true
	if s.discard {
		s.stopping.Store(true)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
