package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// acked records the SETs that succeeded and which server epoch must hold
// them. A SET counts for an epoch only if it started and returned while
// that epoch's server was up and not being closed: only then is it known
// which server acknowledged it.
type acked struct {
	mu     sync.Mutex
	epoch  int
	stable bool
	keys   map[int][]string
}

func (a *acked) begin() (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.epoch, a.stable
}

func (a *acked) done(key string, epoch int, wasStable bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if wasStable && a.stable && a.epoch == epoch {
		a.keys[epoch] = append(a.keys[epoch], key)
	}
}

// closing ends the current epoch and returns the keys its server must hold.
func (a *acked) closing() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stable = false
	return a.keys[a.epoch]
}

func (a *acked) opened(epoch int) {
	a.mu.Lock()
	a.epoch, a.stable = epoch, true
	a.mu.Unlock()
}

// load runs writers on clients until stop is closed: each SETs a fresh key
// and reads it back. Every call is timed against the client's timeout.
func load(t *testing.T, clients []*runtime.Client, timeout time.Duration, a *acked, all *[]string, allMu *sync.Mutex, st *tally, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	limit := timeout + slack
	for i, c := range clients {
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					key := fmt.Sprintf("restart/%d/%d/%d", i, w, n)
					epoch, stable := 0, false
					if a != nil {
						epoch, stable = a.begin()
					}
					start := time.Now()
					_, err := c.Set(context.Background(), []byte(key), []byte(key), runtime.SetOptions{})
					st.add(err, time.Since(start), limit, "SET "+key)
					if err != nil {
						continue
					}
					if a != nil {
						a.done(key, epoch, stable)
					}
					if all != nil {
						allMu.Lock()
						*all = append(*all, key)
						allMu.Unlock()
					}
					start = time.Now()
					_, _, err = c.Get(context.Background(), []byte(key))
					st.add(err, time.Since(start), limit, "GET "+key)
				}
			}()
		}
	}
	return &wg
}

// settle waits until every client can make a request again.
func settle(t *testing.T, clients []*runtime.Client) {
	t.Helper()
	for _, c := range clients {
		waitFor(t, c.ClientID()+" to make a request after the faults stopped", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := c.Set(ctx, []byte("settle/"+c.ClientID()), []byte("x"), runtime.SetOptions{})
			return err == nil
		})
	}
}

func TestEmbeddedServerRestartedUnderLoad(t *testing.T) {
	r := startRestartable(t)
	p := faultproxy.Start(t, r.addr)
	var clients []*runtime.Client
	for i := range 3 {
		clients = append(clients, dial(t, config(t, p.Addr(), fmt.Sprintf("restart-%d", i))))
	}
	a := &acked{keys: make(map[int][]string)}
	a.opened(0)
	st := &tally{}
	stop := make(chan struct{})
	wg := load(t, clients, 2*time.Second, a, nil, nil, st, stop)

	const restarts = 3
	verified := 0
	for range restarts {
		time.Sleep(300 * time.Millisecond)
		srv, _ := r.current()
		for _, k := range a.closing() {
			if _, ok := srv.Engine().Lookup([]byte(k)); !ok {
				t.Errorf("acknowledged SET %s is missing from the server that acknowledged it", k)
			}
			verified++
		}
		r.restart()
		_, epoch := r.current()
		a.opened(epoch)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	srv, _ := r.current()
	for _, k := range a.closing() {
		if _, ok := srv.Engine().Lookup([]byte(k)); !ok {
			t.Errorf("acknowledged SET %s is missing", k)
		}
		verified++
	}
	settle(t, clients)
	t.Logf("%d restarts: %v; %d acknowledged SETs verified on their server", restarts, st, verified)
	for _, h := range st.hung {
		t.Errorf("hung: %s", h)
	}
	if st.ok == 0 || verified == 0 {
		t.Fatalf("no call succeeded: %v", st)
	}
}

func TestMosquittoRestartedUnderLoad(t *testing.T) {
	b := brokertest.Start(t)
	srv := servertest.NewExternal(t, b.URL())
	p := faultproxy.Start(t, b.Addr())
	var clients []*runtime.Client
	for i := range 2 {
		clients = append(clients, dial(t, config(t, p.Addr(), fmt.Sprintf("mrestart-%d", i))))
	}
	st := &tally{}
	var all []string
	var allMu sync.Mutex
	stop := make(chan struct{})
	wg := load(t, clients, 2*time.Second, nil, &all, &allMu, st, stop)
	var restarts atomic.Int32
	for range 2 {
		time.Sleep(400 * time.Millisecond)
		b.Restart()
		restarts.Add(1)
	}
	time.Sleep(400 * time.Millisecond)
	close(stop)
	wg.Wait()
	settle(t, clients)
	// The state store outlives the broker here, so every acknowledged SET
	// must still be there, whenever it was made.
	allMu.Lock()
	defer allMu.Unlock()
	for _, k := range all {
		if _, ok := srv.Engine().Lookup([]byte(k)); !ok {
			t.Errorf("acknowledged SET %s was lost", k)
		}
	}
	t.Logf("%d mosquitto restarts: %v; %d acknowledged SETs all read back", restarts.Load(), st, len(all))
	for _, h := range st.hung {
		t.Errorf("hung: %s", h)
	}
	if st.ok == 0 {
		t.Fatalf("no call succeeded: %v", st)
	}
}
