package server

import "sync"

// serializer runs items in order per key, different keys concurrently, and
// never blocks the caller of push. The engine pushes notifications under
// its lock (keyed by watching client) and the external transport pushes
// requests from paho's delivery goroutine (keyed by requesting client):
// neither may wait. Each key with pending items has one goroutine
// draining its queue, so a slow client delays only its own items. Queues
// are unbounded on purpose: dropping would break the promise that no
// change of a watched key goes unnoticed while the client is connected.
type serializer[T any] struct {
	run func(T)

	mu     sync.Mutex
	queues map[string]*queue[T]
	closed bool
	wg     sync.WaitGroup
}

type queue[T any] struct{ items []T }

func newSerializer[T any](run func(T)) *serializer[T] {
	return &serializer[T]{run: run, queues: make(map[string]*queue[T])}
}

// push queues item behind the earlier items of key. After close it
// discards the item.
func (s *serializer[T]) push(key string, item T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	q, running := s.queues[key]
	if !running {
		q = &queue[T]{}
		s.queues[key] = q
		s.wg.Add(1)
		go s.drain(key, q)
	}
	q.items = append(q.items, item)
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
			s.run(it)
		}
	}
}

// close discards further pushes and waits until the queued items have run
// (run must give up quickly once the server is closing).
func (s *serializer[T]) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
}
