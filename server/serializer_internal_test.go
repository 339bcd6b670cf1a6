package server

import (
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
)

// A serializer with a limit refuses items beyond perKey of one key or
// total bytes of all, takes them again once earlier ones have run, and
// with discard drops at close what has not run yet.
func TestSerializerLimit(t *testing.T) {
	gate := make(chan struct{})
	var mu sync.Mutex
	var ran []int
	s := newSerializer(func(i int) {
		if i == 0 {
			<-gate // the first item of "a" blocks its queue
		}
		mu.Lock()
		ran = append(ran, i)
		mu.Unlock()
	})
	s.limit = &serialLimit[int]{perKey: 3, perKeyBytes: 10, total: 5, keys: 10, size: func(int) int64 { return 1 }}
	s.discard = true
	for _, tc := range []struct {
		key      string
		item     int
		wantFull bool
	}{
		{"a", 0, false}, {"a", 1, false}, {"a", 2, false},
		{"a", 3, true}, // "a" has 3 waiting
		{"b", 10, false}, {"c", 20, false},
		{"d", 30, true}, // 5 waiting in all
	} {
		if full := s.push(tc.key, tc.item); full != tc.wantFull {
			t.Fatalf("push(%s, %d): full %v, want %v", tc.key, tc.item, full, tc.wantFull)
		}
	}
	testwait.Until(t, 10*time.Second, "b's and c's items run", func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) == 2 })
	testwait.Until(t, 10*time.Second, "their bytes returned", func() bool { return !s.push("d", 31) })
	s.mu.Lock()
	s.closed, s.discard = true, true // as close does, without waiting
	s.stopping.Store(true)
	s.mu.Unlock()
	close(gate)
	s.wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, i := range ran {
		if i == 1 || i == 2 {
			t.Fatalf("items queued behind a closing serializer ran: %v", ran)
		}
	}
	if s.bytes != 0 {
		t.Fatalf("%d bytes counted after every item ran or was dropped", s.bytes)
	}
}

// The limit also bounds the keys with items (each has a goroutine) and the
// bytes of one key.
func TestSerializerLimitKeysAndBytes(t *testing.T) {
	gate := make(chan struct{})
	s := newSerializer(func(int) { <-gate })
	s.limit = &serialLimit[int]{perKey: 100, perKeyBytes: 10, total: 100, keys: 2, size: func(i int) int64 { return int64(i) }}
	defer func() { close(gate); s.close() }()
	for _, tc := range []struct {
		key      string
		size     int
		wantFull bool
	}{
		{"a", 6, false}, {"a", 4, false}, {"a", 1, true}, // 10 bytes of "a"
		{"b", 1, false},
		{"c", 1, true}, // two keys have items
	} {
		if full := s.push(tc.key, tc.size); full != tc.wantFull {
			t.Fatalf("push(%s, %d): full %v, want %v", tc.key, tc.size, full, tc.wantFull)
		}
	}
}
