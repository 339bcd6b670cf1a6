package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSemaphoreIsFIFOAndFollowsItsLimit(t *testing.T) {
	s := newSemaphore(2)
	ctx := context.Background()
	for range 2 {
		if err := s.acquire(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			if err := s.acquire(ctx, nil); err == nil {
				order <- i
			}
		}()
		for {
			s.mu.Lock()
			n := len(s.waiters)
			s.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.release()
	if got := <-order; got != 0 {
		t.Fatalf("first granted waiter %d, want 0", got)
	}
	s.setLimit(4) // grows: both remaining waiters get in
	if a, b := <-order, <-order; a+b != 3 {
		t.Fatalf("order %d %d", a, b)
	}
	if s.inUse() != 4 {
		t.Fatalf("in use %d", s.inUse())
	}
	s.setLimit(1) // shrinks: nobody new until enough leave
	for range 3 {
		s.release()
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := s.acquire(cctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire over a shrunk limit: %v", err)
	}
	abort := make(chan struct{})
	close(abort)
	if err := s.acquire(ctx, abort); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after abort: %v", err)
	}
	s.release()
	if err := s.acquire(ctx, nil); err != nil || s.inUse() != 1 {
		t.Fatalf("slot not handed back: %v, in use %d", err, s.inUse())
	}
}
