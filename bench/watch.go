package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

// seqBytes is the round number at the start of every watched value.
const seqBytes = 8

// readyPoll is how often the warm-up SET repeats until every watcher has
// seen one.
const readyPoll = 20 * time.Millisecond

// round is one SET of the watched key and the notifications it awaits.
type round struct {
	seq       uint64
	start     time.Time
	remaining atomic.Int64
	done      chan struct{}
}

// watchSide is one watcher's record, written only by its goroutine.
type watchSide struct {
	lat        []time.Duration
	last       uint64
	duplicates int
}

// runWatch is the watch mode: rounds of one SET each, every round waiting
// until all watchers are notified (or Timeout passes) before the next.
// Round 0, repeated until every watcher has seen it, is the warm-up that
// proves all registrations are in place.
func runWatch(ctx context.Context, cfg Config, brokerURL, runID string, rep *Report) error {
	prefix := "ssgen-bench-" + runID
	wcs, err := dialClients(ctx, brokerURL, prefix+"-w", cfg.WatchClients, cfg)
	if err != nil {
		return err
	}
	defer closeAll(wcs)
	setters, err := dialClients(ctx, brokerURL, prefix+"-setter", 1, cfg)
	if err != nil {
		return err
	}
	defer closeAll(setters)
	setter := setters[0]
	key := []byte("ssgen-bench/" + runID + "/watched")

	var (
		cur        atomic.Pointer[round]
		ready      atomic.Int64
		resyncs    atomic.Int64
		wg         sync.WaitGroup
		sides      = make([]*watchSide, cfg.Watchers)
		wctx, stop = context.WithCancel(ctx)
	)
	for i := range cfg.Watchers {
		side := &watchSide{}
		sides[i] = side
		c := wcs[i%len(wcs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			warm := false
			for ev, err := range c.Watch(wctx, key) {
				if err != nil || len(ev.Value) < seqBytes {
					continue
				}
				if ev.Kind == runtime.EventResync {
					resyncs.Add(1)
					continue
				}
				at := time.Now()
				seq := binary.BigEndian.Uint64(ev.Value)
				if seq == 0 {
					if !warm {
						warm = true
						ready.Add(1)
					}
					continue
				}
				if seq == side.last {
					side.duplicates++
					continue
				}
				side.last = seq
				if r := cur.Load(); r != nil && r.seq == seq {
					side.lat = append(side.lat, at.Sub(r.start))
					if r.remaining.Add(-1) == 0 {
						close(r.done)
					}
				}
			}
		}()
	}
	finish := func() { stop(); wg.Wait() }

	value := make([]byte, cfg.ValueSize)
	warmUntil := time.Now().Add(3 * cfg.Timeout)
	for ready.Load() < int64(cfg.Watchers) {
		if time.Now().After(warmUntil) || ctx.Err() != nil {
			finish()
			return fmt.Errorf("bench: only %d of %d watchers registered in time", ready.Load(), cfg.Watchers)
		}
		if _, err := setter.Set(ctx, key, value, runtime.SetOptions{Persist: cfg.Persist}); err != nil {
			finish()
			return fmt.Errorf("bench: warm-up SET: %w", err)
		}
		time.Sleep(readyPoll)
	}
	time.Sleep(2 * readyPoll) // let the last warm-up notifications drain

	var (
		setLat   []time.Duration
		errs     int
		first    error
		notified int
		rounds   int
	)
	t0 := time.Now()
	for seq := uint64(1); ctx.Err() == nil; seq++ {
		if cfg.Requests > 0 && seq > uint64(cfg.Requests) {
			break
		}
		if cfg.Duration > 0 && time.Since(t0) >= cfg.Duration {
			break
		}
		r := &round{seq: seq, done: make(chan struct{})}
		r.remaining.Store(int64(cfg.Watchers))
		binary.BigEndian.PutUint64(value, seq)
		r.start = time.Now()
		cur.Store(r)
		_, err := setter.Set(ctx, key, value, runtime.SetOptions{Persist: cfg.Persist})
		setLat = append(setLat, time.Since(r.start))
		if err != nil {
			errs++
			if first == nil {
				first = err
			}
			continue
		}
		rounds++
		t := time.NewTimer(cfg.Timeout)
		select {
		case <-r.done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		notified += cfg.Watchers - int(max(r.remaining.Load(), 0))
	}
	elapsed := time.Since(t0)
	finish()

	var all []time.Duration
	dups := 0
	for _, s := range sides {
		all = append(all, s.lat...)
		dups += s.duplicates
	}
	// Notifications that came after their round's wait ended are in the
	// samples but not in notified; keep the two consistent.
	wr := &WatchResult{
		Watchers: cfg.Watchers, WatchClients: cfg.WatchClients, Rounds: rounds,
		Expected: rounds * cfg.Watchers, Notified: notified,
		Duplicates: dups, Resyncs: int(resyncs.Load()),
		Latency: summarize(all),
	}
	wr.Missed = wr.Expected - wr.Notified
	rep.Watch = wr
	rep.Elapsed = elapsed
	rep.Ops, rep.Errors = len(setLat), errs
	rep.OpsPerSec = rate(len(setLat), elapsed)
	rep.PerOp = []OpResult{{Op: "set", Count: len(setLat), Errors: errs, OpsPerSec: rep.OpsPerSec, Latency: summarize(setLat)}}
	rep.All = rep.PerOp[0].Latency
	if first != nil {
		rep.FirstError = first.Error()
	}
	return nil
}
