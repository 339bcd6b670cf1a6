package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// seen is what one watcher observed.
type seen struct {
	mu        sync.Mutex
	last      int // the latest value, -1 for absent
	resyncs   []time.Time
	backwards []string
}

func (s *seen) resyncsAfter(t0 time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.resyncs {
		if r.After(t0) {
			n++
		}
	}
	return n
}

func (s *seen) latest() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// watch runs a Watch of key on c until ctx ends, recording into a seen.
func watch(ctx context.Context, t *testing.T, c *runtime.Client, key string, wg *sync.WaitGroup) *seen {
	s := &seen{last: -1}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev, err := range c.WatchWith(ctx, []byte(key), runtime.WatchOptions{Current: true}) {
			if err != nil {
				t.Logf("watch %s: %v", key, err)
				continue
			}
			v := -1
			if ev.Found {
				n, perr := strconv.Atoi(string(ev.Value))
				if perr != nil {
					t.Errorf("watch %s: value %q", key, ev.Value)
					continue
				}
				v = n
			}
			s.mu.Lock()
			if ev.Kind == runtime.EventResync {
				s.resyncs = append(s.resyncs, time.Now())
			}
			if v < s.last {
				s.backwards = append(s.backwards, fmt.Sprintf("%v event took the value from %d back to %d", ev.Kind, s.last, v))
			}
			s.last = v
			s.mu.Unlock()
		}
	}()
	return s
}

// Every reconnect gives each watcher a Resync, and once the writes stop,
// each watcher's last value is the last value written; values never go
// backwards on the way.
func TestWatchersResyncAfterEveryReconnectAndEndOnTheLatestValue(t *testing.T) {
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())
	wc := dial(t, config(t, p.Addr(), "watcher"))
	writer := dial(t, config(t, srv.Addr(), "writer"))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	const key = "watched"
	if _, err := writer.Set(ctx, []byte(key), []byte("0"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}

	wctx, stopWatch := context.WithCancel(ctx)
	var wwg sync.WaitGroup
	defer func() { stopWatch(); wwg.Wait() }()
	watchers := []*seen{watch(wctx, t, wc, key, &wwg), watch(wctx, t, wc, key, &wwg)}
	waitFor(t, "the watchers' first Resync", func() bool {
		return watchers[0].resyncsAfter(time.Time{}) > 0 && watchers[1].resyncsAfter(time.Time{}) > 0
	})

	var written atomic.Int64
	stopWrites := make(chan struct{})
	writesDone := make(chan struct{})
	go func() {
		defer close(writesDone)
		for n := int64(1); ; n++ {
			select {
			case <-stopWrites:
				return
			case <-time.After(3 * time.Millisecond):
			}
			if _, err := writer.Set(ctx, []byte(key), []byte(strconv.FormatInt(n, 10)), runtime.SetOptions{}); err == nil {
				written.Store(n)
			}
		}
	}()

	const cuts = 6
	for i := range cuts {
		before := wc.Stats().Reconnects
		cutAt := time.Now()
		p.Cut()
		waitFor(t, fmt.Sprintf("reconnect %d", i+1), func() bool { return wc.Stats().Reconnects > before })
		for j, w := range watchers {
			waitFor(t, fmt.Sprintf("watcher %d's Resync after reconnect %d", j, i+1), func() bool { return w.resyncsAfter(cutAt) > 0 })
		}
	}
	close(stopWrites)
	<-writesDone
	final := int(written.Load())
	for j, w := range watchers {
		waitFor(t, fmt.Sprintf("watcher %d to see the last value written (%d)", j, final), func() bool { return w.latest() == final })
		w.mu.Lock()
		for _, b := range w.backwards {
			t.Errorf("watcher %d: %s", j, b)
		}
		t.Logf("watcher %d: %d Resyncs over %d reconnects, last value %d = last written", j, len(w.resyncs), cuts, w.last)
		w.mu.Unlock()
	}
}
