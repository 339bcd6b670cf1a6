package engine

import (
	"context"
	"strconv"
	"sync"
	"testing"
)

// Concurrent requests, inspection, DropClient and Run must be race-free
// (run with -race) and keep every answer well-formed.
func TestConcurrentUseIsSafe(t *testing.T) {
	var mu sync.Mutex
	notified := 0
	e := New(Config{OnNotify: func(Notification) { mu.Lock(); notified++; mu.Unlock() }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := "c" + strconv.Itoa(g)
			for i := range 200 {
				key := "k" + strconv.Itoa(i%7)
				for _, a := range [][]string{
					{"KEYNOTIFY", key},
					{"SET", key, "v", "PX", "1"},
					{"GET", key},
					{"VDEL", key, "v"},
					{"DEL", key},
				} {
					req := benchReq(a...)
					req.Client = client
					if err := checkResult(req, e.Handle(req)); err != nil {
						t.Error(err)
						return
					}
				}
				if i%50 == 0 {
					e.DropClient(client)
					e.Keys()
					e.Watchers([]byte(key))
				}
			}
		}()
	}
	wg.Wait()
}
