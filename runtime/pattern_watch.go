package runtime

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
)

// DefaultRescan is how often a WatchPattern lists its pattern again to
// find keys other clients created, unless PatternWatchOptions.Rescan says
// otherwise.
const DefaultRescan = 5 * time.Second

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
}

// WatchPattern reports the changes of every key matching a glob (the
// syntax of ListKeys). It lists the keys with SCAN and watches each one as
// Watch does, sharing the per-key KEYNOTIFY registrations with every other
// watcher of the key, so each key's events are in order and the
// guarantees of Watch hold per key. The events, whose Key says which key:
//
//   - first, an EventResync for each key listed, with its value read after
//     its registration is live (the initial state; keys are watched in
//     parallel, so their order is not the listing's);
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
// on with a key nobody watches. A rescan that fails yields its error and
// the watch goes on; a failed first listing ends it. The iteration ends
// when ctx ends or the Client closes.
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
		pw := &patternWatch{
			c: c, ctx: ctx, pattern: pattern, glob: glob.Compile(pattern), opts: opts,
			items: make(chan pwItem, 64),
			wrote: make(chan string, 256),
			wake:  make(chan struct{}, 1),
			keys:  map[string]*pwKey{},
		}
		c.patterns.add(pw)
		defer func() {
			c.patterns.remove(pw)
			cancel()
			pw.wg.Wait()
		}()
		pw.run(yield)
	}
}

// patternWatch is one WatchPattern iteration. Only its run goroutine
// touches keys; the per-key goroutines talk to it through items.
type patternWatch struct {
	c       *Client
	ctx     context.Context
	pattern string
	glob    *glob.Pattern
	opts    PatternWatchOptions

	items  chan pwItem   // events of the per-key watches
	wrote  chan string   // keys this client set that match
	wake   chan struct{} // capacity 1: look at rescan
	rescan atomic.Bool   // a reconnect happened, or wrote overflowed

	keys map[string]*pwKey
	wg   sync.WaitGroup
}

// pwKey is one watched key.
type pwKey struct {
	key        string
	cancel     context.CancelFunc
	discovered bool  // found after the first listing: its first Resync is reported as a Set
	started    bool  // its first event has been seen
	failed     error // an error it yielded; if its watch then ends, the pattern watch does
}

// pwItem is one event, error or end of a per-key watch.
type pwItem struct {
	k   *pwKey
	ev  Event
	err error
	end bool
}

func (pw *patternWatch) poke() {
	select {
	case pw.wake <- struct{}{}:
	default:
	}
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
		rescan := false
		select {
		case <-pw.ctx.Done():
			return
		case <-pw.c.closing:
			return
		case it := <-pw.items:
			ev, deliver, stop, err := pw.handle(it)
			if stop {
				return
			}
			if deliver && !yield(ev, err) {
				return
			}
		case key := <-pw.wrote:
			pw.start(key, true)
		case <-tick:
			rescan = true
		case <-pw.opts.Trigger:
			rescan = true
		case <-pw.wake:
			rescan = pw.rescan.Swap(false)
		}
		if rescan {
			// A reconnection without notifications ends the watch even
			// when it watches no key yet (its keys' watches end too).
			if err := pw.c.NotificationsErr(); err != nil {
				yield(Event{}, err)
				return
			}
			if err := pw.scan(true); err != nil {
				if pw.ctx.Err() != nil || errors.Is(err, ErrClosed) {
					return
				}
				if !yield(Event{}, err) {
					return
				}
			}
		}
	}
}

// handle turns a per-key item into what the pattern watch yields.
func (pw *patternWatch) handle(it pwItem) (ev Event, deliver, stop bool, err error) {
	k := it.k
	if pw.keys[k.key] != k {
		return Event{}, false, false, nil // a key stopped since; its leftovers
	}
	switch {
	case it.end:
		// The key's watch ended by itself: the context or the client
		// ended (the loop notices), or after a refusal it yielded.
		pw.stop(k)
		return Event{}, false, k.failed != nil, nil
	case it.err != nil:
		k.failed = it.err
		return Event{}, true, false, wrap(it.err, "watch "+strconv.Quote(k.key))
	}
	ev = it.ev
	if !k.started {
		k.started = true
		if ev.Kind == EventResync && !ev.Found {
			pw.stop(k) // gone before its first read: nothing to report
			return Event{}, false, false, nil
		}
		if k.discovered && ev.Kind == EventResync {
			ev.Kind = EventSet
		}
	}
	if ev.Kind == EventDelete || (ev.Kind == EventResync && !ev.Found) {
		pw.stop(k)
	}
	return ev, true, false, nil
}

// scan lists the pattern and starts watching the keys not watched yet.
func (pw *patternWatch) scan(discovered bool) error {
	for k, err := range pw.c.ListKeys(pw.pattern, ListOptions{}).All(pw.ctx) {
		if err != nil {
			return err
		}
		pw.start(string(k), discovered)
	}
	return nil
}

// start watches key unless it is watched already.
func (pw *patternWatch) start(key string, discovered bool) {
	if pw.keys[key] != nil || (pw.opts.Filter != nil && !pw.opts.Filter([]byte(key))) {
		return
	}
	kctx, cancel := context.WithCancel(pw.ctx)
	k := &pwKey{key: key, cancel: cancel, discovered: discovered}
	pw.keys[key] = k
	pw.wg.Add(1)
	go func() {
		defer pw.wg.Done()
		send := func(it pwItem) bool {
			select {
			case pw.items <- it:
				return true
			case <-kctx.Done():
				return false
			}
		}
		opts := WatchOptions{Current: true, Buffer: pw.opts.Buffer}
		for ev, err := range pw.c.WatchWith(kctx, []byte(key), opts) {
			if !send(pwItem{k: k, ev: ev, err: err}) {
				return
			}
		}
		send(pwItem{k: k, end: true})
	}()
}

// stop ends the watch of k (its registration goes when its last watcher
// does).
func (pw *patternWatch) stop(k *pwKey) {
	k.cancel()
	if pw.keys[k.key] == k {
		delete(pw.keys, k.key)
	}
}

// patternHub tells the client's pattern watches about reconnects and about
// the keys this client sets.
type patternHub struct {
	n  atomic.Int32 // len(ws), read without the lock on every Set
	mu sync.RWMutex
	ws map[*patternWatch]struct{}
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
