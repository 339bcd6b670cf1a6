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

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// EventKind is what a watch event reports.
type EventKind int

const (
	// EventSet: the key was set; Value is the new value.
	EventSet EventKind = iota + 1
	// EventDelete: the key was deleted (DEL, VDEL or expiry).
	EventDelete
	// EventResync: changes may have been missed (a reconnect, or this
	// watcher fell behind); Value, Version and Found are the key's state
	// read afterwards with GET.
	EventResync
)

func (k EventKind) String() string {
	switch k {
	case EventSet:
		return "Set"
	case EventDelete:
		return "Delete"
	case EventResync:
		return "Resync"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one change of a watched key. Key and Value may be shared
// with other watchers of the key: do not modify them.
type Event struct {
	Kind    EventKind
	Key     []byte
	Value   []byte
	Version hlc.HLC // the __ts of the notification, or the GET version of a Resync
	Found   bool    // the key exists after this event (always true for Set)
}

// Watch reports the changes of key, from the moment the iteration starts
// (the KEYNOTIFY registration is made before the first event is awaited)
// until ctx ends or the Client closes. Any number of watchers share one
// registration per key. A watcher that does not keep up with its buffer,
// and every watcher after a reconnect, receives an EventResync carrying
// the key's current state instead of the changes it missed. Errors are
// yielded; the iteration continues after a Resync that failed and ends
// after a registration the service refused.
//
// While the broker refuses the client's notification subscription
// (Client.NotificationsErr), Watch yields ErrNotificationsUnavailable at
// once and ends without sending KEYNOTIFY; a running Watch whose
// reconnection finds the subscription refused yields it and ends, as for
// a refused registration. Start a new Watch once the broker grants the
// subscription again.
func (c *Client) Watch(ctx context.Context, key []byte) iter.Seq2[Event, error] {
	return c.WatchWith(ctx, key, WatchOptions{})
}

// WatchOptions adjust one Watch.
type WatchOptions struct {
	// Current makes the first event an EventResync with the key's state,
	// read after the registration is live: the watcher starts from a known
	// value with no gap before the first change.
	Current bool
	// Buffer overrides Config.WatchBuffer for this watcher.
	Buffer int
}

// WatchWith is Watch with options.
func (c *Client) WatchWith(ctx context.Context, key []byte, opts WatchOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := checkKey(key); err != nil {
			yield(Event{}, err)
			return
		}
		if err := c.NotificationsErr(); err != nil {
			yield(Event{}, err)
			return
		}
		size := opts.Buffer
		if size <= 0 {
			size = c.cfg.WatchBuffer
		}
		w := &watcher{
			key:  string(key),
			ch:   make(chan Event, size),
			wake: make(chan struct{}, 1),
		}
		if err := c.watches.add(ctx, w); err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrClosed) { // those end a watch quietly
				yield(Event{}, err)
			}
			return
		}
		defer c.watches.remove(w)
		if opts.Current {
			w.resync.Store(true)
		}
		c.watchLoop(ctx, w, yield)
	}
}

func (c *Client) watchLoop(ctx context.Context, w *watcher, yield func(Event, error) bool) {
	var floor hlc.HLC // versions at or below it are older than the last Resync
	var retry <-chan time.Time
	retries := 0
	for {
		if e := w.failed.Load(); e != nil {
			yield(Event{}, *e)
			return
		}
		if w.resync.Load() && retry == nil {
			ev, err := c.resync(ctx, w)
			switch {
			case err == nil:
				retries = 0
				floor = hlc.HLC{}
				if ev.Found {
					floor = ev.Version
				}
				c.st.resyncs.Add(1)
				if !yield(ev, nil) {
					return
				}
			case ctx.Err() != nil || errors.Is(err, ErrClosed):
				return
			case IsRetryable(err):
				// Try again soon; a reconnect also wakes us.
				w.resync.Store(true)
				retries++
				retry = time.After(c.backoff.delay(retries))
			default:
				if !yield(Event{}, err) {
					return
				}
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-c.closing:
			return
		case <-w.wake:
		case <-retry:
			retry = nil
		case ev := <-w.ch:
			if !floor.IsZero() && !ev.Version.IsZero() && ev.Version.Compare(floor) <= 0 {
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// resync discards what the watcher has buffered and reads the key.
func (c *Client) resync(ctx context.Context, w *watcher) (Event, error) {
	w.resync.Store(false)
	for drained := false; !drained; {
		select {
		case <-w.ch:
		default:
			drained = true
		}
	}
	key := []byte(w.key)
	v, ver, err := c.Get(ctx, key)
	switch {
	case err == nil:
		return Event{Kind: EventResync, Key: key, Value: v, Version: ver, Found: true}, nil
	case errors.Is(err, ErrNotFound):
		return Event{Kind: EventResync, Key: key}, nil
	}
	return Event{}, err
}

// watcher is one Watch iteration, or one key of a WatchPattern (sink
// set): then its events and pokes go to the pattern watch's one
// dispatcher instead of ch and wake, and no goroutine is its own.
type watcher struct {
	key    string
	ch     chan Event    // bounded; the paho callback never waits on it
	wake   chan struct{} // capacity 1: "look at the flags"
	resync atomic.Bool
	failed atomic.Pointer[error]
	sink   *patternWatch
}

func (w *watcher) poke() {
	if w.sink != nil {
		w.sink.pokeWatcher(w)
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// keyState is the registration of one key shared by its watchers.
type keyState struct {
	key      []byte
	watchers map[*watcher]struct{}
	regConn  *conn      // the connection KEYNOTIFY was accepted on, if any
	opMu     sync.Mutex // orders this key's KEYNOTIFY and KEYNOTIFY STOP
}

// registry tracks watched keys. Its lock is held only for map work, never
// across a request, so the paho callback's dispatch never waits long.
type registry struct {
	c        *Client
	mu       sync.RWMutex
	keys     map[string]*keyState
	watchers int
}

// init readies r on a new Client and registers its listener: watched keys
// are registered again on every new connection, and notifications are
// dispatched to their watchers.
func (r *registry) init(c *Client) {
	r.c = c
	r.keys = make(map[string]*keyState)
	c.listen(listener{connected: r.connected, notified: r.dispatch})
}

func (r *registry) counts() (watchers, keys int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.watchers, len(r.keys)
}

// add joins w to its key and makes sure the key is registered. Transient
// failures are retried until ctx ends; a refusal by the service is
// returned.
func (r *registry) add(ctx context.Context, w *watcher) error {
	r.mu.Lock()
	ks := r.keys[w.key]
	if ks == nil {
		ks = &keyState{key: []byte(w.key), watchers: make(map[*watcher]struct{})}
		r.keys[w.key] = ks
	}
	ks.watchers[w] = struct{}{}
	r.watchers++
	r.mu.Unlock()

	for n := 1; ; n++ {
		err := r.reconcile(ctx, ks)
		if err == nil {
			return nil
		}
		if !IsRetryable(err) || ctx.Err() != nil {
			r.leave(w)
			r.reconcileLater(ks)
			return err
		}
		t := time.NewTimer(r.c.backoff.delay(n))
		select {
		case <-ctx.Done():
			t.Stop()
			r.leave(w)
			r.reconcileLater(ks)
			return ctx.Err()
		case <-r.c.closing:
			t.Stop()
			r.leave(w)
			return ErrClosed
		case <-t.C:
		}
	}
}

func (r *registry) leave(w *watcher) {
	r.mu.Lock()
	if ks := r.keys[w.key]; ks != nil {
		if _, ok := ks.watchers[w]; ok {
			delete(ks.watchers, w)
			r.watchers--
		}
	}
	r.mu.Unlock()
}

// remove ends w; the last watcher of a key takes its registration along.
func (r *registry) remove(w *watcher) {
	r.leave(w)
	r.mu.RLock()
	ks := r.keys[w.key]
	r.mu.RUnlock()
	if ks != nil {
		r.reconcileLater(ks)
	}
}

// removeAll ends many watchers at once (a WatchPattern's keys): their
// registrations go from a few goroutines, not one per key.
func (r *registry) removeAll(ws []*watcher) {
	if len(ws) == 0 {
		return
	}
	seen := map[*keyState]bool{}
	var keys []*keyState
	for _, w := range ws {
		r.leave(w)
		r.mu.RLock()
		ks := r.keys[w.key]
		r.mu.RUnlock()
		if ks != nil && !seen[ks] {
			seen[ks] = true
			keys = append(keys, ks)
		}
	}
	c := r.c
	r.pool(keys, func(ks *keyState) {
		ctx, cancel := c.untilClose(context.Background(), c.cfg.Timeout)
		defer cancel()
		if err := r.reconcile(ctx, ks); err != nil && !errors.Is(err, ErrClosed) {
			c.log.Debug("KEYNOTIFY STOP failed", "key", string(ks.key), "err", err)
		}
	})
}

// registryWorkers is how many keys a reconnect or a removeAll handles at
// once: many keys should not wait on each other's round trips, nor flood
// a broker with a small Receive Maximum, nor cost a goroutine each.
const registryWorkers = 16

// pool runs f for each key from at most registryWorkers background
// goroutines.
func (r *registry) pool(keys []*keyState, f func(*keyState)) {
	var next atomic.Int64
	for range min(registryWorkers, len(keys)) {
		r.c.background(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(keys) {
					return
				}
				f(keys[i])
			}
		})
	}
}

func (r *registry) reconcileLater(ks *keyState) {
	c := r.c
	c.background(func() {
		ctx, cancel := c.untilClose(context.Background(), c.cfg.Timeout)
		defer cancel()
		if err := r.reconcile(ctx, ks); err != nil && !errors.Is(err, ErrClosed) {
			c.log.Debug("KEYNOTIFY STOP failed", "key", string(ks.key), "err", err)
		}
	})
}

// reconcile brings the service's registration of ks in line with whether
// it has watchers, one request at a time per key.
func (r *registry) reconcile(ctx context.Context, ks *keyState) error {
	ks.opMu.Lock()
	defer ks.opMu.Unlock()
	for {
		r.mu.Lock()
		want := len(ks.watchers) > 0
		have := ks.regConn != nil && ks.regConn.ctx.Err() == nil
		if !want && !have {
			if r.keys[string(ks.key)] == ks {
				delete(r.keys, string(ks.key))
			}
			ks.regConn = nil
			r.mu.Unlock()
			return nil
		}
		r.mu.Unlock()
		if want == have {
			return nil
		}
		cn, err := r.c.keyNotify(ctx, ks.key, !want)
		if err != nil {
			return err
		}
		r.mu.Lock()
		if want {
			ks.regConn = cn
		} else {
			ks.regConn = nil
		}
		r.mu.Unlock()
	}
}

// connected re-registers every watched key on a new connection (the
// service forgot them with the old one) and then tells their watchers to
// resync: registering first means no change falls between the two.
func (r *registry) connected(cn *conn) {
	c := r.c
	r.mu.RLock()
	var keys []*keyState
	for _, ks := range r.keys {
		keys = append(keys, ks)
	}
	r.mu.RUnlock()
	if len(keys) == 0 {
		return
	}
	r.pool(keys, func(ks *keyState) {
		if cn.ctx.Err() == nil && !c.isClosing() {
			r.reregister(cn, ks)
		}
	})
}

func (r *registry) reregister(cn *conn, ks *keyState) {
	c := r.c
	for n := 1; cn.ctx.Err() == nil && !c.isClosing(); n++ {
		err := r.reconcile(cn.ctx, ks)
		switch {
		case err == nil:
			r.mu.RLock()
			for w := range ks.watchers {
				w.resync.Store(true)
				w.poke()
			}
			r.mu.RUnlock()
			return
		case !IsRetryable(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed):
			if errors.Is(err, ErrNotificationsUnavailable) {
				// Not sent; the connection warned once for all keys.
				c.log.Debug("watch ended: notifications unavailable", "key", string(ks.key))
			} else {
				c.log.Warn("KEYNOTIFY refused after reconnect", "key", string(ks.key), "err", err)
			}
			r.mu.RLock()
			for w := range ks.watchers {
				w.failed.Store(&err)
				w.poke()
			}
			r.mu.RUnlock()
			return
		}
		t := time.NewTimer(c.backoff.delay(n))
		select {
		case <-cn.ctx.Done():
		case <-c.closing:
		case <-t.C:
		}
		t.Stop()
	}
}

// dispatch routes a notification to the key's watchers. It runs in the
// paho callback: a full buffer marks the watcher for a Resync rather than
// waiting.
func (r *registry) dispatch(p *paho.Publish) {
	c := r.c
	key, ok := decodeHex(p.Topic[len(c.notifyPrefix):])
	if !ok || len(key) == 0 {
		c.log.Warn("notification on an unexpected topic", "topic", p.Topic)
		return
	}
	n, err := resp3.ParseNotification(p.Payload)
	if err != nil {
		c.log.Warn("unparsable notification", "key", string(key), "err", err)
		return
	}
	ev := Event{Key: key}
	switch n.Op {
	case resp3.OpSet:
		ev.Kind, ev.Value, ev.Found = EventSet, n.Value, true
	case resp3.OpDelete:
		ev.Kind = EventDelete
	}
	// A notification's __ts is the key's new version. One without a valid
	// __ts, or one the client's clock refuses (more than MaxDrift ahead, or
	// a counter it cannot merge), is dropped rather than delivered with a
	// version nobody can trust or order; the key's watchers get a Resync
	// instead, whose GET reply is checked like any other, so the change is
	// not missed silently.
	v, err := notificationVersion(p)
	if err == nil {
		_, err = c.clock.Update(v)
	}
	if err != nil {
		c.st.refusedNotifs.Add(1)
		c.log.Warn("notification dropped", "key", string(key), "err", err)
		r.mu.RLock()
		if ks := r.keys[string(key)]; ks != nil {
			for w := range ks.watchers {
				w.resync.Store(true)
				w.poke()
			}
		}
		r.mu.RUnlock()
		return
	}
	ev.Version = v
	r.mu.RLock()
	defer r.mu.RUnlock()
	ks := r.keys[string(key)]
	if ks == nil {
		return
	}
	for w := range ks.watchers {
		if w.sink != nil {
			w.sink.event(w, ev)
			continue
		}
		select {
		case w.ch <- ev:
		default:
			c.st.overflows.Add(1)
			w.resync.Store(true)
			w.poke()
		}
	}
}

// errNoNotificationTS reports a notification without __ts.
var errNoNotificationTS = errors.New("notification has no __ts")

// notificationVersion returns the notification's __ts: it must be present,
// parse, and not be the zero clock.
func notificationVersion(p *paho.Publish) (hlc.HLC, error) {
	if p.Properties != nil {
		for _, u := range p.Properties.User {
			if u.Key != protocol.PropTimestamp {
				continue
			}
			v, err := hlc.Parse(u.Value)
			if err == nil && v.Wall == 0 {
				err = fmt.Errorf("notification __ts %q is the zero clock", u.Value)
			}
			return v, err
		}
	}
	return hlc.HLC{}, errNoNotificationTS
}
