package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ssgen/ssgen/examples/thermostat/thermostat"
	"github.com/ssgen/ssgen/runtime"
)

// report is what the scenario showed; the end-to-end test checks it.
type report struct {
	TakeoverHappened       bool // the standby acquired the lease the frozen active held
	LateWriteRefused       bool // the frozen controller's runtime refused its write: lease lost
	StaleWriteFenced       bool // the state store rejected the stale fencing token
	SetPointChanges        int  // set-point changes the watcher saw
	ConcurrentEditsApplied int  // SetIfVersion calls that won (exactly one of the racing two)
}

// run plays the scenario and returns what it showed.
func run(ctx context.Context, w io.Writer, opts options) (report, error) {
	var rep report
	ctx, cancel := withDeadline(ctx)
	defer cancel()

	conn, err := newConnector(opts)
	if err != nil {
		return rep, err
	}
	defer conn.close()
	p := newPrinter(w)
	defer p.close()
	p.say("example", "thermostat %q on %s", opts.thermostat, conn.where())

	// One client per role, as separate processes would have.
	clients := map[string]*runtime.Client{}
	for _, role := range []string{"controller-a", "controller-b", "operator-1", "operator-2", "watcher"} {
		c, err := conn.dial(ctx, role)
		if err != nil {
			return rep, err
		}
		defer c.Close()
		clients[role] = c
	}
	therm := func(role string) *thermostat.Thermostat {
		// The id was validated once below; the error cannot recur.
		t, _ := thermostat.New(clients[role]).Thermostat(opts.thermostat)
		return t
	}
	if _, err := thermostat.New(clients["watcher"]).Thermostat(opts.thermostat); err != nil {
		return rep, err
	}

	// The watcher prints every typed change of the three keys, starting
	// from their current values: once it has printed those, its
	// registrations are live and it misses no change that follows.
	watchCtx, stopWatching := context.WithCancel(ctx)
	var watchers, ready sync.WaitGroup
	var setPoints counter
	watch(watchCtx, &watchers, &ready, p, therm("watcher").SetPoint(), setPoints.add, func(v thermostat.SetPoint) string {
		return fmt.Sprintf("set point %.1f°C %s by %s", v.Celsius, v.Mode, v.UpdatedBy)
	})
	watch(watchCtx, &watchers, &ready, p, therm("watcher").Reading(), nil, func(v float64) string {
		return fmt.Sprintf("reading %.2f°C", v)
	})
	watch(watchCtx, &watchers, &ready, p, therm("watcher").Heater(), nil, func(v thermostat.Heater) string {
		return fmt.Sprintf("heater on=%t (commanded by %s)", v.On, v.By)
	})
	defer func() { stopWatching(); watchers.Wait() }()
	ready.Wait()

	// Controller A takes the owner lease first; B waits for it.
	aCtx, freezeA := context.WithCancel(ctx)
	defer freezeA()
	leaseA, err := therm("controller-a").Owner().Acquire(aCtx)
	if err != nil {
		return rep, fmt.Errorf("controller-a: acquire: %w", err)
	}
	p.say("controller-a", "holds the owner lease (fencing token %s)", leaseA.Token())
	type acquired struct {
		lease *runtime.Lease
		err   error
	}
	bAcquired := make(chan acquired, 1)
	go func() {
		p.say("controller-b", "standing by for the owner lease")
		le, err := therm("controller-b").Owner().Acquire(ctx)
		bAcquired <- acquired{le, err}
	}()

	// A commands the heater (its lease's token rides along) and publishes
	// readings, which expire after 30 s unless refreshed.
	if _, err := therm("controller-a").Heater().Set(ctx, thermostat.Heater{On: true, By: "controller-a"}); err != nil {
		return rep, fmt.Errorf("controller-a: heater: %w", err)
	}
	for i, r := range []float64{19.2, 19.6, 20.1} {
		if _, err := therm("controller-a").Reading().Set(ctx, r); err != nil {
			return rep, fmt.Errorf("controller-a: reading %d: %w", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Two operators race to change the set point from the same version.
	// The first run creates it; on later runs it exists, and Update
	// declines to write (a write of the same value would still notify the
	// watcher and give the key a new version).
	created, _, err := therm("operator-1").SetPoint().Update(ctx, func(cur thermostat.SetPoint, found bool) (thermostat.SetPoint, error) {
		if found {
			return cur, runtime.ErrSkipUpdate
		}
		return thermostat.SetPoint{Celsius: 20, Mode: thermostat.ModeHeat, UpdatedBy: "operator-1"}, nil
	})
	if err != nil {
		return rep, fmt.Errorf("operator-1: initial set point: %w", err)
	}
	seen, err := therm("operator-1").SetPoint().Get(ctx)
	if err != nil {
		return rep, fmt.Errorf("operator-1: read set point: %w", err)
	}
	var race sync.WaitGroup
	var wins counter
	for _, op := range []struct {
		role    string
		celsius float64
	}{{"operator-1", 21.5}, {"operator-2", 18.0}} {
		race.Add(1)
		go func() {
			defer race.Done()
			next := thermostat.SetPoint{Celsius: op.celsius, Mode: thermostat.ModeHeat, UpdatedBy: op.role}
			// Written only if nobody wrote since the read: versions, unlike
			// values, never come back, so exactly one operator wins even
			// when a value is set again.
			ok, _, err := therm(op.role).SetPoint().SetIfVersion(ctx, next, seen.Version)
			switch {
			case err != nil:
				p.say(op.role, "set-if-version failed: %v", err)
			case ok:
				wins.add()
				p.say(op.role, "changed the set point %.1f → %.1f", seen.Value.Celsius, op.celsius)
			default:
				p.say(op.role, "lost the race: the set point changed since version %s; not overwritten", seen.Version)
			}
		}()
	}
	race.Wait()
	rep.ConcurrentEditsApplied = wins.n()

	// A freezes: it stops renewing, as a process stuck in a long pause would.
	tokenA := leaseA.Token()
	freezeA()
	p.say("controller-a", "freezes (stops renewing its lease)")

	var leaseB *runtime.Lease
	select {
	case got := <-bAcquired:
		if got.err != nil {
			return rep, fmt.Errorf("controller-b: acquire: %w", got.err)
		}
		leaseB = got.lease
	case <-ctx.Done():
		return rep, fmt.Errorf("controller-b never took over: %w", ctx.Err())
	}
	rep.TakeoverHappened = true
	p.say("controller-b", "took over the owner lease (fencing token %s)", leaseB.Token())
	if _, err := therm("controller-b").Heater().Set(ctx, thermostat.Heater{On: false, By: "controller-b"}); err != nil {
		return rep, fmt.Errorf("controller-b: heater: %w", err)
	}

	// A wakes up and tries to command the heater again.
	<-leaseA.Lost()
	_, err = therm("controller-a").Heater().Set(ctx, thermostat.Heater{On: true, By: "controller-a"})
	if errors.Is(err, runtime.ErrLeaseLost) {
		rep.LateWriteRefused = true
		p.say("controller-a", "wakes; its write is refused before sending: %v", err)
	} else {
		p.say("controller-a", "wakes; unexpected result of its write: %v", err)
	}
	// A process paused between checking its lease and sending would send
	// its stale token anyway: the state store's fencing rejects it.
	_, err = therm("controller-a").Heater().Set(ctx, thermostat.Heater{On: true, By: "controller-a"}, runtime.WithFencingToken(tokenA))
	if errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
		rep.StaleWriteFenced = true
		p.say("controller-a", "its write with the stale token %s is rejected by the state store: %v", tokenA, err)
	} else {
		p.say("controller-a", "unexpected result of its stale write: %v", err)
	}

	if opts.forever {
		p.say("controller-b", "keeps publishing readings until interrupted")
		if err := publishForever(ctx, therm("controller-b"), leaseB); err != nil && ctx.Err() == nil {
			return rep, err
		}
	}
	if err := leaseB.Release(context.WithoutCancel(ctx)); err != nil {
		return rep, fmt.Errorf("controller-b: release: %w", err)
	}
	p.say("controller-b", "released the owner lease")
	// The watcher is stopped once it has seen every set-point change made
	// here: the initial one, if this run made it, and the winning edit.
	want := rep.ConcurrentEditsApplied
	if created {
		want++
	}
	if err := setPoints.waitFor(ctx, want); err != nil {
		return rep, fmt.Errorf("watcher: saw %d of %d set-point changes: %w", setPoints.n(), want, err)
	}
	rep.SetPointChanges = setPoints.n()
	return rep, nil
}

// publishForever publishes a reading every second while the lease holds.
func publishForever(ctx context.Context, t *thermostat.Thermostat, lease *runtime.Lease) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	reading := 20.0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-lease.Lost():
			return lease.Err()
		case <-tick.C:
			reading += 0.1
			if _, err := t.Reading().Set(ctx, reading); err != nil {
				return err
			}
		}
	}
}

// watch prints every event of k until ctx ends, starting with k's current
// value; ready is done once that has been printed. changed, when not nil, is
// called for every change after it.
func watch[T any](ctx context.Context, wg, ready *sync.WaitGroup, p *printer, k *runtime.Key[T], changed func(), describe func(T) string) {
	wg.Add(1)
	ready.Add(1)
	go func() {
		defer wg.Done()
		first := true
		for ev, err := range k.WatchWith(ctx, runtime.WatchOptions{Current: true}) {
			switch {
			case err != nil:
				if ctx.Err() == nil {
					p.say("watcher", "%s: %v", k.Name(), err)
				}
			case ev.Kind == runtime.EventDelete:
				p.say("watcher", "%s deleted", k.Name())
			case ev.Kind == runtime.EventResync && !ev.Found:
				p.say("watcher", "%s: absent", k.Name())
			case ev.Kind == runtime.EventResync:
				p.say("watcher", "%s: currently %s", k.Name(), describe(ev.Value))
			default:
				p.say("watcher", "%s", describe(ev.Value))
				if changed != nil {
					changed()
				}
			}
			if first {
				first = false
				ready.Done()
			}
		}
		if first {
			ready.Done() // ended before its first event
		}
	}()
}

// counter counts events from several goroutines.
type counter struct {
	mu    sync.Mutex
	count int
	bump  chan struct{} // closed and replaced on every add
}

func (c *counter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	if c.bump != nil {
		close(c.bump)
		c.bump = nil
	}
}

func (c *counter) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// waitFor waits until the count reaches n or ctx ends.
func (c *counter) waitFor(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if c.count >= n {
			c.mu.Unlock()
			return nil
		}
		if c.bump == nil {
			c.bump = make(chan struct{})
		}
		bump := c.bump
		c.mu.Unlock()
		select {
		case <-bump:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
