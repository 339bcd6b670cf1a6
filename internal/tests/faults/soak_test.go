package faults

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

var soakFlag = flag.Duration("soak", 0, "how long TestSoak runs (default 3s, or $SSGEN_SOAK)")

func soakDuration(t *testing.T) time.Duration {
	if *soakFlag > 0 {
		return *soakFlag
	}
	if v := os.Getenv("SSGEN_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SSGEN_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 3 * time.Second
}

// soakKeys is each writer's key space: bounded, so the store's size (and
// the heap) does not grow with the soak's length.
const soakKeys = 32

// writerState is what one writer knows of its keys: the highest sequence
// number the service acknowledged, and the highest it ever sent. A SET
// that failed in transit may still have been applied, so the store may
// hold anything between the two, never less than the acknowledged one.
type writerState struct {
	acked, sent [soakKeys]int64
}

// A bounded mixed load (SET, GET, DEL, VDEL, watches, a lease) through a
// proxy that cuts connections at random. Afterwards nothing acknowledged is
// missing, every watcher ends on its key's value, and once the clients
// close the goroutines and the heap return to their baseline.
func TestSoak(t *testing.T) {
	d := soakDuration(t)
	srv := servertest.New(t)
	p := faultproxy.Start(t, srv.Addr())

	goruntime.GC()
	baseGoroutines := goruntime.NumGoroutine()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	baseHeap := ms.HeapAlloc

	const nClients, writersPerClient = 3, 2
	clients := make([]*runtime.Client, nClients)
	for i := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := runtime.Dial(ctx, config(t, p.Addr(), fmt.Sprintf("soak-%d", i)))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	closeAll := sync.OnceFunc(func() {
		for _, c := range clients {
			_ = c.Close()
		}
	})
	t.Cleanup(closeAll)

	st := &tally{}
	limit := 2*time.Second + slack
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	states := make([][]*writerState, nClients)
	for ci, c := range clients {
		for w := range writersPerClient {
			ws := &writerState{}
			states[ci] = append(states[ci], ws)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(w)))
				for seq := int64(1); ctx.Err() == nil; seq++ {
					k := rng.IntN(soakKeys)
					key := fmt.Appendf(nil, "soak/%d/%d/%d", ci, w, k)
					t0 := time.Now()
					var err error
					switch op := rng.IntN(10); {
					case op < 5:
						ws.sent[k] = seq
						_, err = c.Set(context.Background(), key, strconv.AppendInt(nil, seq, 10), runtime.SetOptions{})
						if err == nil {
							ws.acked[k] = seq
						}
					case op < 9:
						_, _, err = c.Get(context.Background(), key)
					default:
						// Deletes go to a key space of their own, so that
						// the written keys can be checked afterwards.
						scratch := fmt.Appendf(nil, "soak/scratch/%d/%d", ci, w)
						if _, err = c.Set(context.Background(), scratch, []byte("x"), runtime.SetOptions{}); err == nil {
							if rng.IntN(2) == 0 {
								_, _, err = c.Del(context.Background(), scratch, runtime.DelOptions{})
							} else {
								_, _, err = c.VDel(context.Background(), scratch, []byte("x"), runtime.DelOptions{})
							}
						}
					}
					st.add(err, time.Since(t0), limit, "soak op")
				}
			}()
		}
	}
	// Each client watches one key of its first writer.
	var wwg sync.WaitGroup
	watchers := make([]*seen, nClients)
	for ci, c := range clients {
		watchers[ci] = watch(ctx, t, c, fmt.Sprintf("soak/%d/0/0", ci), &wwg)
	}
	// A lease held by client 0 and contested by client 1, renewed through
	// the faults.
	leaseDone := make(chan struct{})
	var leaseLosses atomic.Int32
	go func() {
		defer close(leaseDone)
		for ctx.Err() == nil {
			c := clients[rand.IntN(2)]
			lctx, cancel := context.WithTimeout(ctx, time.Second)
			le, err := runtime.NewLock(c, []byte("soak/lock"), 500*time.Millisecond).Acquire(lctx)
			if err == nil {
				select {
				case <-le.Lost():
					leaseLosses.Add(1)
				case <-time.After(200 * time.Millisecond):
				}
				_ = le.Release(context.Background())
			}
			cancel()
		}
	}()

	cuts := 0
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(50+rand.IntN(300)) * time.Millisecond)
		p.Cut()
		cuts++
	}
	stop()
	wg.Wait()
	<-leaseDone
	wwg.Wait()

	// Healed: the last acknowledged write of every key is there (or a
	// later one that was sent but whose answer was lost).
	settle(t, clients)
	lost := 0
	checked := 0
	for ci := range states {
		for w, ws := range states[ci] {
			for k := range soakKeys {
				if ws.acked[k] == 0 {
					continue
				}
				checked++
				e, ok := srv.Engine().Lookup(fmt.Appendf(nil, "soak/%d/%d/%d", ci, w, k))
				got, _ := strconv.ParseInt(string(e.Value), 10, 64)
				if !ok || got < ws.acked[k] || got > ws.sent[k] {
					lost++
					t.Errorf("soak/%d/%d/%d holds %q (found %v); acknowledged %d, last sent %d", ci, w, k, e.Value, ok, ws.acked[k], ws.sent[k])
				}
			}
		}
	}
	// Watchers: a fresh watch after the faults must end on the stored value.
	var fwg sync.WaitGroup
	fctx, fstop := context.WithCancel(context.Background())
	for ci, c := range clients {
		key := fmt.Sprintf("soak/%d/0/0", ci)
		want := -1
		if e, ok := srv.Engine().Lookup([]byte(key)); ok {
			want, _ = strconv.Atoi(string(e.Value))
		}
		w := watch(fctx, t, c, key, &fwg)
		waitFor(t, "a watcher of "+key+" to see its value", func() bool { return w.latest() == want })
	}
	fstop()
	fwg.Wait()
	var reconnects, requests uint64
	for _, c := range clients {
		s := c.Stats()
		reconnects += s.Reconnects
		requests += s.Requests
	}
	closeAll()

	// Goroutines: the clients', the server's per-connection ones and the
	// proxy's links all end; allow a bounded wait for them to unwind.
	deadline := time.Now().Add(10 * time.Second)
	for goruntime.NumGoroutine() > baseGoroutines && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > baseGoroutines {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the clients closed, %d before they started:\n%s", n, baseGoroutines, buf[:goruntime.Stack(buf, true)])
	}
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	const heapSlack = 8 << 20
	if ms.HeapAlloc > baseHeap+heapSlack {
		t.Errorf("heap %d KiB after the soak, %d KiB before: more than %d KiB kept", ms.HeapAlloc>>10, baseHeap>>10, heapSlack>>10)
	}
	t.Logf("soak %v: %d cuts, %d reconnects, %d requests published, %v; %d lease losses; %d keys checked, %d acknowledged writes lost; heap %d -> %d KiB, goroutines %d -> %d",
		d, cuts, reconnects, requests, st, leaseLosses.Load(), checked, lost, baseHeap>>10, ms.HeapAlloc>>10, baseGoroutines, goruntime.NumGoroutine())
	for _, h := range st.hung {
		t.Errorf("hung: %s", h)
	}
}
