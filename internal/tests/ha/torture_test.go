package ha

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

var (
	rounds = flag.Int("ha.rounds", 0, "leader kills of TestHATorture (one etcd member is also killed, in the middle round); default SSGEN_HA_ROUNDS, or 5")
	procsN = flag.Int("ha.procs", 3, "ssgen serve processes of TestHATorture (2 or 3)")
)

// The torture test's load.
const (
	writerClients = 3
	workersEach   = 2 // one request in flight each
	keptEach      = 4 // kept keys per worker, all watched
	fencedEach    = 4 // kept keys per worker written with the worker's lease's token
	expiringEach  = 2 // kept keys per worker written with a TTL: they must expire
	expiringTTL   = time.Second
	// requestTimeout is the clients' request bound: a request whose answer
	// the failover swallowed fails after it, and its key is then written no
	// more (its outcome is unknown; a fresh key takes its place).
	requestTimeout = 3 * time.Second
	leaseTTL       = 10 * time.Second
)

// state is what one SET leaves in a key.
type state struct {
	value   string
	version hlc.HLC // zero until acknowledged
	fence   hlc.HLC // the fencing token it carried; zero for a kept key
}

// slot is one key the test writes: its last acknowledged state and the
// SET whose answer never came, if any. A slot with such a SET is retired:
// nothing writes it again, and every check accepts either state in it.
type slot struct {
	name    string
	fenced  bool
	watched bool
	expires bool // every SET carries a TTL of expiringTTL
	exists  bool
	acked   state
	pending *state
	retired bool
	// superseded: a fresh slot has taken the retired one's place.
	superseded bool
	seen       hlc.HLC // the highest version a check has read
	// acks is every acknowledged version since the watch began, for the
	// watch check.
	acks      []hlc.HLC
	w         *keyWatch
	lastEvent hlc.HLC // the version of the last event the checks consumed
}

func (s *slot) kind() string {
	switch {
	case s.fenced:
		return fenced
	case s.expires:
		return expiring
	}
	return kept
}

// keyWatch is one Watch on a slot's key, recording its events.
type keyWatch struct {
	mu     sync.Mutex
	events []runtime.Event
	errs   []error
	ready  bool // the first (Current) resync arrived: the registration is live
}

func (w *keyWatch) snapshot() ([]runtime.Event, []error, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]runtime.Event(nil), w.events...), append([]error(nil), w.errs...), w.ready
}

// drop forgets the first n events (checked).
func (w *keyWatch) drop(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append([]runtime.Event(nil), w.events[n:]...)
	w.errs = nil
}

// worker issues one SET at a time on its own slots.
type worker struct {
	id      int
	cl      *runtime.Client
	rnd     *rand.Rand
	slots   []*slot
	lock    *runtime.Lock
	lease   *runtime.Lease
	tokens  []hlc.HLC // every lease token it got, in order
	losses  []error   // leases lost (why)
	nextKey int
	tried   time.Time // the last TryAcquire
	errs    []string  // violations found while writing
}

// The kinds of slot.
const (
	kept     = "kept"     // watched
	fenced   = "fenced"   // written with the worker's lease's token
	expiring = "expiring" // written with a TTL
)

// fresh adds a new slot of a kind (also replacing a retired one).
func (w *worker) fresh(kind string) *slot {
	w.nextKey++
	s := &slot{name: fmt.Sprintf("ha/%s/w%d/k%d", kind, w.id, w.nextKey),
		fenced: kind == fenced, watched: kind == kept, expires: kind == expiring}
	w.slots = append(w.slots, s)
	return s
}

// ensureLease returns a lease that has not been lost, trying to take one
// (at most every 200 ms) when needed; nil when there is none yet.
func (w *worker) ensureLease(ctx context.Context) *runtime.Lease {
	if w.lease != nil {
		select {
		case <-w.lease.Lost():
			w.losses = append(w.losses, w.lease.Err())
			w.lease = nil
		default:
			return w.lease
		}
	}
	if time.Since(w.tried) < 200*time.Millisecond {
		return nil
	}
	w.tried = time.Now()
	// The lease lives as long as ctx, the test: renewals keep it.
	lease, ok, err := w.lock.TryAcquire(ctx)
	if err != nil || !ok {
		return nil
	}
	tok := lease.Token()
	if n := len(w.tokens); n > 0 && tok.Compare(w.tokens[n-1]) <= 0 {
		w.errs = append(w.errs, fmt.Sprintf("lock %s: lease token %v not after the previous lease's %v", w.lock.Name(), tok, w.tokens[n-1]))
	}
	w.tokens = append(w.tokens, tok)
	w.lease = lease
	return lease
}

// run writes until stop is closed; every acknowledgement adds one to acks.
func (w *worker) run(ctx context.Context, round int, stop <-chan struct{}, acks *atomic.Int64) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		var live []*slot
		for _, s := range w.slots {
			if !s.retired {
				live = append(live, s)
			}
		}
		if len(live) == 0 {
			return
		}
		s := live[w.rnd.IntN(len(live))]
		var lease *runtime.Lease
		if s.fenced {
			if lease = w.ensureLease(ctx); lease == nil {
				// No lease yet: a kept key instead, if one is left.
				s = nil
				for _, k := range live {
					if !k.fenced {
						s = k
						break
					}
				}
				if s == nil {
					time.Sleep(10 * time.Millisecond) // a retry pace, not a synchronisation
					continue
				}
			}
		}
		next := state{value: fmt.Sprintf("r%d-w%d-%d", round, w.id, n)}
		opts := runtime.SetOptions{Persist: true}
		if s.expires {
			opts.TTL = expiringTTL
		}
		if s.fenced {
			next.fence = lease.Token()
			opts.FencingToken = next.fence
		}
		s.pending = &next
		v, err := w.cl.Set(ctx, []byte(s.name), []byte(next.value), opts)
		switch {
		case err == nil:
		case errors.Is(err, runtime.ErrFencingTokenLowerVersion):
			// The token is the newest this worker holds for keys only it
			// writes: the store has lost the order of tokens.
			s.pending = nil
			w.errs = append(w.errs, fmt.Sprintf("key %s: SET with token %v (lease of %s) refused: %v", s.name, next.fence, w.lock.Name(), err))
			continue
		default:
			// No answer (the failover): it may or may not have landed.
			s.retired = true
			continue
		}
		if s.exists && v.Compare(s.acked.version) <= 0 {
			w.errs = append(w.errs, fmt.Sprintf("key %s: SET acknowledged with version %v, not after the previous acknowledged %v", s.name, v, s.acked.version))
		}
		next.version = v
		s.acked, s.exists, s.pending = next, true, nil
		if s.watched {
			s.acks = append(s.acks, v)
		}
		acks.Add(1)
	}
}

// TestHATorture kills the leading ssgen serve with SIGKILL round after
// round (and one etcd member once) while clients write kept and fenced
// keys and watch the kept ones; after each round every acknowledged write
// is checked. The number of rounds is -ha.rounds (5: CI).
func TestHATorture(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, mosquitto and ssgen serve processes")
	}
	if *procsN < 2 {
		t.Fatalf("-ha.procs=%d: a failover needs two processes", *procsN)
	}
	nRounds := roundsWanted(t)
	etcd := etcdtest.Start(t, 3)
	broker := brokertest.Start(t)
	cl := &cluster{t: t}
	for i := range *procsN {
		p := newServeProc(t, fmt.Sprintf("serve%d", i),
			"--broker", broker.URL(), "--store", etcd.URL(), "--log-level", "info")
		cl.procs = append(cl.procs, p)
		p.start()
		if i == 0 {
			waitRole(t, p, "leader")
		}
	}
	for _, p := range cl.procs[1:] {
		waitRole(t, p, "standby")
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 31))
	var workers []*worker
	for c := range writerClients {
		client := dial(t, broker.Addr(), fmt.Sprintf("ha-writer-%d", c), requestTimeout)
		for range workersEach {
			w := &worker{id: len(workers), cl: client, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 1))}
			w.lock = runtime.NewLock(client, []byte(fmt.Sprintf("ha/lock/w%d", w.id)), leaseTTL)
			for range keptEach {
				w.fresh(kept)
			}
			for range fencedEach {
				w.fresh(fenced)
			}
			for range expiringEach {
				w.fresh(expiring)
			}
			workers = append(workers, w)
		}
	}
	watcher := dial(t, broker.Addr(), "ha-watcher", requestTimeout)
	reader := dial(t, broker.Addr(), "ha-reader", requestTimeout)

	var top hlc.HLC // the highest version acknowledged or read so far
	etcdRound := nRounds / 2
	total := 0
	// stopWorkers ends the round's writers; a failed wait (Fatalf) ends
	// them too, before the clients close.
	var stopWorkers func()
	defer func() {
		if stopWorkers != nil {
			stopWorkers()
		}
	}()
	for round := range nRounds {
		// Replace retired slots and watch every watched key that has no
		// watch yet, while the store is quiet.
		for _, w := range workers {
			for _, s := range w.slots {
				if s.retired && !s.superseded {
					s.superseded = true
					w.fresh(s.kind())
				}
			}
			for _, s := range w.slots {
				if s.watched && s.w == nil && !s.retired {
					s.w = startWatch(ctx, watcher, s.name)
				}
			}
		}
		for _, w := range workers {
			for _, s := range w.slots {
				if s.w != nil && !s.retired {
					testwait.Until(t, bound, "watch on "+s.name+" registered", func() bool {
						_, _, ready := s.w.snapshot()
						return ready
					})
				}
			}
		}

		var acks atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(ctx, round, stop, &acks)
			}()
		}
		stopWorkers = func() {
			close(stop)
			wg.Wait()
		}
		limit := int64(60 + rnd.IntN(120))
		testwait.Until(t, bound, fmt.Sprintf("round %d: %d acknowledged SETs before the kill", round, limit), func() bool { return acks.Load() >= limit })
		killedEtcd := -1
		if round == etcdRound {
			killedEtcd = rnd.IntN(etcd.Size())
			t.Logf("round %d: etcd member %d killed", round, killedEtcd)
			etcd.Kill(killedEtcd)
		}
		old := cl.leader()
		old.kill()
		t.Logf("round %d: %s (leader) killed after %d acknowledged SETs", round, old.name, acks.Load())
		// The new leader answers: the writes go on.
		after := acks.Load() + 60
		testwait.Until(t, bound, fmt.Sprintf("round %d: SETs acknowledged after the leader's kill", round), func() bool { return acks.Load() >= after })
		stopWorkers()
		stopWorkers = nil
		total += int(acks.Load())
		cl.checkRunning()
		lead := cl.leader()
		old.start()
		waitRole(t, old, "standby")
		if killedEtcd >= 0 {
			etcd.Restart(killedEtcd)
		}
		if now := cl.leader(); now != lead {
			// Not a fault (nothing acknowledged depends on who leads), but
			// worth seeing in the log.
			t.Logf("round %d: leadership moved from %s to %s without a kill", round, lead.name, now.name)
		}
		top = checkRound(t, round, reader, workers, top)
	}
	retired, losses := 0, 0
	for _, w := range workers {
		for _, s := range w.slots {
			if s.retired {
				retired++
			}
		}
		losses += len(w.losses)
	}
	t.Logf("%d rounds, %d acknowledged SETs checked, %d keys whose SET got no answer, %d leases lost by expiry", nRounds, total, retired, losses)
}

// roundsWanted is -ha.rounds, else SSGEN_HA_ROUNDS (which also reaches
// the test through go test ./...), else 5.
func roundsWanted(t *testing.T) int {
	if *rounds > 0 {
		return *rounds
	}
	if v := os.Getenv("SSGEN_HA_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("SSGEN_HA_ROUNDS=%q: want a positive number", v)
		}
		return n
	}
	return 5
}

// startWatch watches key from now on (its first event is the key's
// current state, once the registration is live).
func startWatch(ctx context.Context, cl *runtime.Client, key string) *keyWatch {
	w := &keyWatch{}
	go func() {
		for ev, err := range cl.WatchWith(ctx, []byte(key), runtime.WatchOptions{Current: true, Buffer: 1024}) {
			w.mu.Lock()
			if err != nil {
				w.errs = append(w.errs, err)
			} else {
				w.events = append(w.events, ev)
				w.ready = true
			}
			w.mu.Unlock()
		}
	}()
	return w
}
