package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// DefaultRescan is how often a WatchPattern lists its pattern again to
// find keys other clients created, unless PatternWatchOptions.Rescan says
// otherwise.
const DefaultRescan = 5 * time.Second

// DefaultPatternMaxKeys is how many keys one WatchPattern watches at most,
// unless PatternWatchOptions.MaxKeys says otherwise. Each watched key
// holds a KEYNOTIFY registration of the service's per-client quota
// (ssgen serve allows 10,000 by default) and about a kilobyte here.
const DefaultPatternMaxKeys = 4096

// ErrWatchLimit ends a WatchPattern that would watch more keys than
// PatternWatchOptions.MaxKeys.
var ErrWatchLimit = errors.New("statestore: pattern watch key limit reached")

// patternWorkers is how many KEYNOTIFY registrations and reads one
// WatchPattern has in flight at most: its goroutines, whatever the number
// of keys.
const patternWorkers = 8

// patternQueue bounds the notifications a WatchPattern holds for its
// consumer; past it a key's notification is replaced by a Resync of the
// key, as a Watch whose buffer is full.
const patternQueue = 4096

// PatternWatchOptions adjust one WatchPattern.
type PatternWatchOptions struct {
	// Rescan is how often the pattern is listed again to find keys that
	// other clients created: 0 means DefaultRescan, a negative value
	// never (reconnects, Trigger and this client's own writes still do).
	Rescan time.Duration
	// Trigger, when not nil, starts a rescan each time it receives a
	// value: for an application that learns of new keys another way, and
	// for tests that must not wait on a timer.
	Trigger <-chan struct{}
	// Buffer overrides Config.WatchBuffer for each key's watcher.
	Buffer int
	// Filter, when not nil, leaves out the keys it returns false for: they
	// are neither watched (no registration) nor reported.
	Filter func(key []byte) bool
	// MaxKeys is the most keys watched at once: 0 means
	// DefaultPatternMaxKeys, a negative value no limit. Finding one more
	// ends the watch with ErrWatchLimit.
	MaxKeys int
}

// WatchPattern reports the changes of every key matching a glob (the
// syntax of ListKeys). It lists the keys with SCAN and watches each one as
// Watch does, sharing the per-key KEYNOTIFY registrations with every other
// watcher of the key, so each key's events are in order and the
// guarantees of Watch hold per key. The events, whose Key says which key:
//
//   - first, an EventResync for each key listed, with its value read after
//     its registration is live (the initial state; keys are registered and
//     read a few at a time, so their order is not the listing's);
//   - then EventSet and EventDelete per key, and EventResync for every key
//     after each reconnect, or when the consumer fell behind on a key;
//   - an EventSet, with the value read once its registration is live, for
//     each key found later: at once for a key this client sets (the client
//     sees its own writes), otherwise at the next rescan (every
//     opts.Rescan, after each reconnect, or when opts.Trigger fires).
//
// A key is watched until it is deleted (the EventDelete, or an
// EventResync with Found false, is its last event) and again once it is
// found anew, so the registrations follow the keys that exist. Each key
// holds one KEYNOTIFY registration of the service's per-client quota:
// when the service refuses one (ErrQuotaExceeded, ErrNotAuthorized), the
// error is yielded, naming the key, and the iteration ends, rather than go
// on with a key nobody watches. At most opts.MaxKeys keys are watched
// (DefaultPatternMaxKeys): finding one more yields ErrWatchLimit and ends
// the iteration. A rescan that fails yields its error and the watch goes
// on; a failed first listing ends it. The iteration ends when ctx ends or
// the Client closes.
//
// Its cost does not grow in goroutines with the keys: one goroutine (the
// caller's) delivers every key's events, and a fixed few register and
// read keys.
//
// While the broker refuses the client's notification subscription
// (Client.NotificationsErr), WatchPattern yields ErrNotificationsUnavailable
// at once and ends, before listing anything; a running one yields it and
// ends when a reconnection finds the subscription refused.
func (c *Client) WatchPattern(ctx context.Context, pattern string, opts PatternWatchOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if pattern == "" {
			yield(Event{}, invalidArg("empty pattern"))
			return
		}
		if err := c.NotificationsErr(); err != nil {
			yield(Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		buffer := opts.Buffer
		if buffer <= 0 {
			buffer = c.cfg.WatchBuffer
		}
		maxKeys := opts.MaxKeys
		if maxKeys == 0 {
			maxKeys = DefaultPatternMaxKeys
		}
		pw := &patternWatch{
			c: c, ctx: ctx, pattern: pattern, glob: glob.Compile(pattern), opts: opts,
			maxKeys: maxKeys, buffer: max(buffer, 1),
			wrote:   make(chan string, 256),
			wake:    make(chan struct{}, 1),
			keys:    map[string]*pwKey{},
			signal:  make(chan struct{}, 1),
			poked:   map[*watcher]struct{}{},
			jobs:    make(chan *pwKey),
			results: make(chan pwResult),
		}
		for range patternWorkers {
			pw.wg.Add(1)
			go pw.worker()
		}
		c.patterns.add(pw)
		defer func() {
			c.patterns.remove(pw)
			cancel()
			pw.wg.Wait()
			ws := make([]*watcher, 0, len(pw.keys))
			for _, k := range pw.keys {
				ws = append(ws, k.w)
			}
			c.watches.removeAll(ws)
		}()
		pw.run(yield)
	}
}

// patternWatch is one WatchPattern iteration. Its run loop, in the
// caller's goroutine, owns keys and yields every event; the paho callback
// hands it notifications through the sink (queue, poked), and its
// workers register and read keys for it.
type patternWatch struct {
	c       *Client
	ctx     context.Context
	pattern string
	glob    *glob.Pattern
	opts    PatternWatchOptions
	maxKeys int // < 0: no limit
	buffer  int // events held per key while its state is being read

	wrote  chan string   // keys this client set that match
	wake   chan struct{} // capacity 1: look at rescan
	rescan atomic.Bool   // a reconnect happened, or wrote overflowed

	keys    map[string]*pwKey
	pending []*pwKey // keys with work for a worker, not yet taken
	jobs    chan *pwKey
	results chan pwResult
	wg      sync.WaitGroup

	// The sink: what the registry's dispatch (the paho callback) and
	// reconnects hand over, taken by the run loop on signal.
	mu     sync.Mutex
	queue  []sinkItem
	poked  map[*watcher]struct{}
	signal chan struct{} // capacity 1
}

// sinkItem is one notification for a watched key.
type sinkItem struct {
	w  *watcher
	ev Event
}

// pwKey is one watched key. Only the run loop touches it, except that a
// worker reads its fixed fields and job.
type pwKey struct {
	key        string
	w          *watcher
	ctx        context.Context
	cancel     context.CancelFunc
	job        pwJob // what the worker is to do (set before handing it over)
	discovered bool  // found after the first listing: its first Resync is reported as a Set
	started    bool  // its first event has been seen
	registered bool  // its KEYNOTIFY registration is live
	busy       bool  // a worker has (or is about to have) it
	reading    bool  // its state is being read: events wait in held
	floor      hlc.HLC
	held       []Event
	retries    int
}

type pwJob uint8

const (
	jobRegister pwJob = iota + 1
	jobRead
)

// pwResult is a worker's answer about k.
type pwResult struct {
	k   *pwKey
	job pwJob
	ev  Event
	err error
}

// event is the registry's dispatch handing over a notification of w's
// key; it never waits. Past patternQueue the key is read again instead.
func (pw *patternWatch) event(w *watcher, ev Event) {
	pw.mu.Lock()
	if len(pw.queue) < patternQueue {
		pw.queue = append(pw.queue, sinkItem{w, ev})
	} else {
		pw.c.st.overflows.Add(1)
		w.resync.Store(true)
		pw.poked[w] = struct{}{}
	}
	pw.mu.Unlock()
	pw.notify()
}

// pokeWatcher says w's flags (resync, failed) changed.
func (pw *patternWatch) pokeWatcher(w *watcher) {
	pw.mu.Lock()
	pw.poked[w] = struct{}{}
	pw.mu.Unlock()
	pw.notify()
}

func (pw *patternWatch) notify() {
	select {
	case pw.signal <- struct{}{}:
	default:
	}
}

func (pw *patternWatch) poke() {
	select {
	case pw.wake <- struct{}{}:
	default:
	}
}

// worker registers keys and reads them, one at a time.
func (pw *patternWatch) worker() {
	defer pw.wg.Done()
	for {
		var k *pwKey
		select {
		case <-pw.ctx.Done():
			return
		case k = <-pw.jobs:
		}
		r := pwResult{k: k, job: k.job}
		switch {
		case k.ctx.Err() != nil:
			r.err = k.ctx.Err()
		case r.job == jobRegister:
			r.err = pw.c.NotificationsErr()
			if r.err == nil {
				r.err = pw.c.watches.add(k.ctx, k.w)
			}
		default:
			r.ev, r.err = pw.c.readKey(k.ctx, k.key)
		}
		select {
		case pw.results <- r:
		case <-pw.ctx.Done():
			if r.job == jobRegister && r.err == nil {
				pw.c.watches.remove(k.w) // nobody will hear of it
			}
			return
		}
	}
}

// readKey is a Resync event with key's current state.
func (c *Client) readKey(ctx context.Context, key string) (Event, error) {
	k := []byte(key)
	v, ver, err := c.Get(ctx, k)
	switch {
	case err == nil:
		return Event{Kind: EventResync, Key: k, Value: v, Version: ver, Found: true}, nil
	case errors.Is(err, ErrNotFound):
		return Event{Kind: EventResync, Key: k}, nil
	}
	return Event{}, err
}

func (pw *patternWatch) run(yield func(Event, error) bool) {
	if err := pw.scan(false); err != nil {
		if pw.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			yield(Event{}, err)
		}
		return
	}
	var tick <-chan time.Time
	if d := pw.opts.Rescan; d >= 0 {
		if d == 0 {
			d = DefaultRescan
		}
		t := time.NewTicker(d)
		defer t.Stop()
		tick = t.C
	}
	for {
		var jobs chan *pwKey
		var next *pwKey
		if len(pw.pending) > 0 {
			jobs, next = pw.jobs, pw.pending[0]
		}
		rescan := false
		select {
		case <-pw.ctx.Done():
			return
		case <-pw.c.closing:
			return
		case jobs <- next:
			pw.pending = pw.pending[1:]
			if len(pw.pending) == 0 {
				pw.pending = nil
			}
		case r := <-pw.results:
			if !pw.result(r, yield) {
				return
			}
		case <-pw.signal:
			if !pw.drain(yield) {
				return
			}
		case key := <-pw.wrote:
			if err := pw.start(key, true); err != nil {
				yield(Event{}, err)
				return
			}
		case <-tick:
			rescan = true
		case <-pw.opts.Trigger:
			rescan = true
		case <-pw.wake:
			rescan = pw.rescan.Swap(false)
		}
		if rescan {
			// A reconnection without notifications ends the watch even
			// when it watches no key yet (its keys' registrations fail too).
			if err := pw.c.NotificationsErr(); err != nil {
				yield(Event{}, err)
				return
			}
			if err := pw.scan(true); err != nil {
				if pw.ctx.Err() != nil || errors.Is(err, ErrClosed) {
					return
				}
				if !yield(Event{}, err) || errors.Is(err, ErrWatchLimit) {
					return
				}
			}
		}
	}
}

// drain takes what the sink holds: notifications in arrival order, then
// the watchers whose flags changed. It reports false when the iteration
// must end.
func (pw *patternWatch) drain(yield func(Event, error) bool) bool {
	pw.mu.Lock()
	queue, poked := pw.queue, pw.poked
	pw.queue, pw.poked = nil, map[*watcher]struct{}{}
	pw.mu.Unlock()
	for _, it := range queue {
		k := pw.keys[it.w.key]
		if k == nil || k.w != it.w {
			continue // a key stopped since
		}
		if !pw.deliver(k, it.ev, yield) {
			return false
		}
	}
	for w := range poked {
		k := pw.keys[w.key]
		if k == nil || k.w != w {
			continue
		}
		if e := w.failed.Load(); e != nil {
			// The registration was refused after a reconnect: the key's
			// watch ends, and the pattern watch with it.
			yield(Event{}, wrap(*e, "watch "+strconv.Quote(k.key)))
			return false
		}
		pw.maybeRead(k)
	}
	return true
}

// deliver handles one notification of k: held while k's state is being
// read, dropped when not newer than the state read, else reported.
func (pw *patternWatch) deliver(k *pwKey, ev Event, yield func(Event, error) bool) bool {
	if !k.registered || k.reading || k.w.resync.Load() {
		if len(k.held) < pw.buffer {
			k.held = append(k.held, ev)
		} else {
			pw.c.st.overflows.Add(1)
			k.w.resync.Store(true) // a read after the one in flight
			pw.maybeRead(k)
		}
		return true
	}
	if !k.floor.IsZero() && !ev.Version.IsZero() && ev.Version.Compare(k.floor) <= 0 {
		return true
	}
	if ev, ok := pw.shape(k, ev); ok {
		return yield(ev, nil)
	}
	return true
}

// shape turns a key's event into what the pattern watch reports (ok
// false: nothing), stopping the key after its last event.
func (pw *patternWatch) shape(k *pwKey, ev Event) (Event, bool) {
	if !k.started {
		k.started = true
		if ev.Kind == EventResync && !ev.Found {
			pw.stop(k) // gone before its first read: nothing to report
			return Event{}, false
		}
		if k.discovered && ev.Kind == EventResync {
			ev.Kind = EventSet
		}
	}
	if ev.Kind == EventDelete || (ev.Kind == EventResync && !ev.Found) {
		pw.stop(k)
	}
	return ev, true
}

// maybeRead hands k to a worker for a read when one is due and none is
// under way.
func (pw *patternWatch) maybeRead(k *pwKey) {
	if k.registered && !k.busy && k.w.resync.Load() {
		pw.schedule(k, jobRead)
	}
}

func (pw *patternWatch) schedule(k *pwKey, job pwJob) {
	k.busy, k.job = true, job
	if job == jobRead {
		// Like Watch's resync: what arrived before the read is older than
		// it; what arrives after is kept and compared with its version.
		k.w.resync.Store(false)
		k.reading, k.held = true, nil
	}
	pw.pending = append(pw.pending, k)
}

// result handles a worker's answer; false ends the iteration.
func (pw *patternWatch) result(r pwResult, yield func(Event, error) bool) bool {
	k := r.k
	if pw.keys[k.key] != k {
		// Stopped since; a registration that succeeded meanwhile goes.
		if r.job == jobRegister && r.err == nil {
			pw.c.watches.remove(k.w)
		}
		return true
	}
	k.busy = false
	if r.job == jobRegister {
		if r.err != nil {
			if k.ctx.Err() != nil || errors.Is(r.err, ErrClosed) {
				pw.stop(k)
				return true
			}
			// A refused registration ends the watch rather than go on
			// with a key nobody watches.
			yield(Event{}, wrap(r.err, "watch "+strconv.Quote(k.key)))
			return false
		}
		k.registered = true
		pw.maybeRead(k)
		return true
	}
	switch {
	case r.err == nil:
		k.reading, k.retries = false, 0
		k.floor = hlc.HLC{}
		if r.ev.Found {
			k.floor = r.ev.Version
		}
		pw.c.st.resyncs.Add(1)
		held := k.held
		k.held = nil
		if ev, ok := pw.shape(k, r.ev); ok && !yield(ev, nil) {
			return false
		}
		if !pw.deliverHeld(k, held, yield) {
			return false
		}
	case k.ctx.Err() != nil || errors.Is(r.err, ErrClosed):
	case IsRetryable(r.err):
		// Read again soon; a reconnect also asks for it.
		k.retries++
		w := k.w
		time.AfterFunc(pw.c.backoff.delay(k.retries), func() {
			w.resync.Store(true)
			pw.pokeWatcher(w)
		})
	default:
		k.reading = false
		held := k.held
		k.held = nil
		if !yield(Event{}, wrap(r.err, "watch "+strconv.Quote(k.key))) {
			return false
		}
		if !pw.deliverHeld(k, held, yield) {
			return false
		}
	}
	return true
}

// deliverHeld delivers the events held for k while it was read (taken
// from k before the read's own event or error was yielded), as long as k
// is still watched, then reads k again should it have fallen behind again
// meanwhile; false ends the iteration.
func (pw *patternWatch) deliverHeld(k *pwKey, held []Event, yield func(Event, error) bool) bool {
	for _, ev := range held {
		if pw.keys[k.key] != k {
			break
		}
		if !pw.deliver(k, ev, yield) {
			return false
		}
	}
	if pw.keys[k.key] == k {
		pw.maybeRead(k)
	}
	return true
}

// scan lists the pattern and starts watching the keys not watched yet.
func (pw *patternWatch) scan(discovered bool) error {
	for k, err := range pw.c.ListKeys(pw.pattern, ListOptions{}).All(pw.ctx) {
		if err != nil {
			return err
		}
		if err := pw.start(string(k), discovered); err != nil {
			return err
		}
	}
	return nil
}

// start watches key unless it is watched already; ErrWatchLimit when the
// watch holds MaxKeys keys.
func (pw *patternWatch) start(key string, discovered bool) error {
	if pw.keys[key] != nil || (pw.opts.Filter != nil && !pw.opts.Filter([]byte(key))) {
		return nil
	}
	if pw.maxKeys >= 0 && len(pw.keys) >= pw.maxKeys {
		return fmt.Errorf("%w: %d keys watched and %q found for %q (PatternWatchOptions.MaxKeys)",
			ErrWatchLimit, len(pw.keys), key, pw.pattern)
	}
	kctx, cancel := context.WithCancel(pw.ctx)
	w := &watcher{key: key, sink: pw}
	w.resync.Store(true) // its first event is its state, read once registered
	k := &pwKey{key: key, w: w, ctx: kctx, cancel: cancel, discovered: discovered}
	pw.keys[key] = k
	pw.schedule(k, jobRegister)
	return nil
}

// stop ends the watch of k (its registration goes when its last watcher
// does).
func (pw *patternWatch) stop(k *pwKey) {
	k.cancel()
	if pw.keys[k.key] == k {
		delete(pw.keys, k.key)
	}
	pw.c.watches.remove(k.w)
}

// patternHub tells the client's pattern watches about reconnects and about
// the keys this client sets.
type patternHub struct {
	n  atomic.Int32 // len(ws), read without the lock on every Set
	mu sync.RWMutex
	ws map[*patternWatch]struct{}
}

// init registers h's listener on a new Client: pattern watches rescan on
// every new connection and hear of the keys the client sets.
func (h *patternHub) init(c *Client) {
	c.listen(listener{connected: func(*conn) { h.connected() }, wrote: h.wrote})
}

func (h *patternHub) add(pw *patternWatch) {
	h.mu.Lock()
	if h.ws == nil {
		h.ws = map[*patternWatch]struct{}{}
	}
	h.ws[pw] = struct{}{}
	h.n.Store(int32(len(h.ws)))
	h.mu.Unlock()
}

func (h *patternHub) remove(pw *patternWatch) {
	h.mu.Lock()
	delete(h.ws, pw)
	h.n.Store(int32(len(h.ws)))
	h.mu.Unlock()
}

// connected asks every pattern watch for a rescan: keys created while the
// client was away have no registration to tell of them.
func (h *patternHub) connected() {
	if h.n.Load() == 0 {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for pw := range h.ws {
		pw.rescan.Store(true)
		pw.poke()
	}
}

// wrote hands a key this client has just set to the pattern watches it
// matches; one whose queue is full rescans instead, so none is missed.
func (h *patternHub) wrote(key []byte) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for pw := range h.ws {
		if !pw.glob.Match(string(key)) {
			continue
		}
		select {
		case pw.wrote <- string(key):
		default:
			pw.rescan.Store(true)
			pw.poke()
		}
	}
}
