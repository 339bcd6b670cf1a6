package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
)

// A restarted server has forgotten every registration and value (the
// embedded store keeps nothing): watchers get a Resync after the restart
// and still end on the last value written.
func TestWatchersFollowAServerRestart(t *testing.T) {
	r := startRestartable(t)
	p := faultproxy.Start(t, r.addr)
	wc := dial(t, config(t, p.Addr(), "restart-watcher"))
	writer := dial(t, config(t, r.addr, "restart-writer"))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	const key = "watched"
	var wg sync.WaitGroup
	wctx, stop := context.WithCancel(ctx)
	defer func() { stop(); wg.Wait() }()
	w := watch(wctx, t, wc, key, &wg)
	waitFor(t, "the first Resync", func() bool { return w.resyncsAfter(time.Time{}) > 0 })

	next := 1
	write := func() {
		t.Helper()
		waitFor(t, "write "+strconv.Itoa(next)+" to succeed", func() bool {
			_, err := writer.Set(ctx, []byte(key), []byte(strconv.Itoa(next)), runtime.SetOptions{})
			return err == nil
		})
		next++
	}
	for i := range 2 {
		for range 5 {
			write()
		}
		restartedAt := time.Now()
		r.restart()
		waitFor(t, fmt.Sprintf("a Resync after restart %d", i+1), func() bool { return w.resyncsAfter(restartedAt) > 0 })
		// Values restart from the new, empty store; the watcher must not
		// hold on to the old server's value.
		write()
		want := next - 1
		waitFor(t, fmt.Sprintf("the watcher to see %d after restart %d", want, i+1), func() bool { return w.latest() == want })
	}
}
