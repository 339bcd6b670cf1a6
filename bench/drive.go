package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/internal/cputime"
)

// bound ends a run after requests operations in all (0: no count bound)
// or after duration (0: no time bound), whichever comes first.
type bound struct {
	requests int
	duration time.Duration
}

// tally is one worker's record; only that worker writes it until drive
// returns, so recording takes no lock.
type tally struct {
	lat   [numOps][]time.Duration
	errs  [numOps]int
	first error
}

// driven is what drive measured. cpu is the CPU time the whole process
// used meanwhile: client, and for an embedded or attached server the
// service and broker too.
type driven struct {
	elapsed time.Duration
	cpu     time.Duration
	tallies []*tally
}

// drive runs workers goroutines that call do in a loop, timing each call.
// do issues one operation and says which; its rand is the worker's own.
// Every worker first makes warmup unrecorded calls, then all start
// together. seed varies the workers' random sequences between segments.
func drive(ctx context.Context, workers, warmup int, seed uint64, b bound, do func(w int, rnd *rand.Rand) (Op, error)) driven {
	var (
		issued  atomic.Int64
		ready   sync.WaitGroup
		done    sync.WaitGroup
		start   = make(chan struct{})
		t0      time.Time
		tallies = make([]*tally, workers)
	)
	perWorker := 1024
	if b.requests > 0 {
		perWorker = b.requests/workers + 1
	}
	ready.Add(workers)
	done.Add(workers)
	for w := range workers {
		t := &tally{}
		for op := range t.lat {
			t.lat[op] = make([]time.Duration, 0, perWorker)
		}
		tallies[w] = t
		go func() {
			defer done.Done()
			rnd := rand.New(rand.NewPCG(uint64(w)+1, seed))
			for range warmup {
				if ctx.Err() != nil {
					break
				}
				_, _ = do(w, rnd)
			}
			ready.Done()
			<-start
			var deadline time.Time
			if b.duration > 0 {
				deadline = t0.Add(b.duration)
			}
			for ctx.Err() == nil {
				if b.requests > 0 && issued.Add(1) > int64(b.requests) {
					return
				}
				s := time.Now()
				op, err := do(w, rnd)
				e := time.Now()
				t.lat[op] = append(t.lat[op], e.Sub(s))
				if err != nil {
					t.errs[op]++
					if t.first == nil {
						t.first = err
					}
				}
				if !deadline.IsZero() && e.After(deadline) {
					return
				}
			}
		}()
	}
	ready.Wait()
	cpu0 := cputime.Process()
	t0 = time.Now()
	close(start)
	done.Wait()
	return driven{elapsed: time.Since(t0), cpu: cputime.Process() - cpu0, tallies: tallies}
}

// combine joins the segments of one workload: their samples and the sum
// of their elapsed times.
func combine(ds []driven) driven {
	var out driven
	for _, d := range ds {
		out.elapsed += d.elapsed
		out.cpu += d.cpu
		out.tallies = append(out.tallies, d.tallies...)
	}
	return out
}

// merge folds the tallies into per-operation results (operations never
// issued are left out) and the summary over all of them.
func (d driven) merge() (per []OpResult, all Latency, ops, errs int, first error) {
	var every []time.Duration
	for op := Op(0); op < numOps; op++ {
		var s []time.Duration
		e := 0
		for _, t := range d.tallies {
			s = append(s, t.lat[op]...)
			e += t.errs[op]
			if first == nil && t.first != nil {
				first = t.first
			}
		}
		if len(s) == 0 {
			continue
		}
		every = append(every, s...)
		per = append(per, OpResult{Op: op.String(), Count: len(s), Errors: e, OpsPerSec: rate(len(s), d.elapsed), Latency: summarize(s)})
		ops += len(s)
		errs += e
	}
	return per, summarize(every), ops, errs, first
}

// perOp is the CPU time per operation, 0 when unknown.
func (d driven) perOp(ops int) time.Duration {
	if ops == 0 {
		return 0
	}
	return d.cpu / time.Duration(ops)
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
