package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// Broker rules for the tests of a refused notification subscription, for
// every (anonymous) client: requests and responses are allowed; in the
// notification space clients, the external-mode service among them, may
// publish, and with rulesNoNotify not subscribe, as under broker rules
// that grant a client its response topic (expressible with the client
// id) but not its notification topic (the hex of the id, which no rule
// variable spells).
var (
	rulesNoNotify = brokertest.Rules{
		Publish:   []string{protocol.RequestTopic, "clients/#"},
		Subscribe: []string{protocol.RequestTopic, "clients/+/services/#"},
	}
	rulesNotify = brokertest.Rules{
		Publish:   rulesNoNotify.Publish,
		Subscribe: append([]string{protocol.NotifyPrefix + "/#"}, rulesNoNotify.Subscribe...),
	}
)

// refusedEnv is mosquitto under an ACL with the external-mode state store
// attached, recording the KEYNOTIFY requests it serves, per client.
type refusedEnv struct {
	b   *brokertest.Broker
	url string

	mu      sync.Mutex
	notify  map[string]int // KEYNOTIFY requests (STOP too) per client
	served  map[string]int // every request per client
	lastKey map[string]string
}

func startRules(t *testing.T, r brokertest.Rules) *refusedEnv {
	t.Helper()
	b := brokertest.StartWithRules(t, r)
	e := &refusedEnv{b: b, url: b.URL(), notify: map[string]int{}, served: map[string]int{}, lastKey: map[string]string{}}
	servertest.NewExternal(t, e.url, servertest.WithOptions(func(o *server.Options) {
		o.OnRequest = func(ev *server.RequestEvent) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.served[ev.Client]++
			if ev.Verb == protocol.VerbKeyNotify {
				e.notify[ev.Client]++
				e.lastKey[ev.Client] = string(ev.Key)
			}
		}
	}))
	return e
}

// counts returns how many requests and KEYNOTIFY requests the service
// served for client.
func (e *refusedEnv) counts(client string) (served, keynotify int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.served[client], e.notify[client]
}

// caughtUp waits until the service has recorded every request c has
// published so far, and returns counts(c). The service tells OnRequest of a
// request after it handed the answer to the broker, so a client may hold
// its answer before the request is counted: reading the counts as soon as
// a call returns misses the last request now and then (often, under load).
func (e *refusedEnv) caughtUp(t *testing.T, c *runtime.Client) (served, keynotify int) {
	t.Helper()
	sent := c.Stats().Requests
	waitFor(t, "the service to record the client's requests", func() bool {
		n, _ := e.counts(c.ClientID())
		return uint64(n) >= sent
	})
	return e.counts(c.ClientID())
}

// logBuf collects a client's log lines (and passes them to t.Log).
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
	w  io.Writer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	return l.w.Write(p)
}

func (l *logBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// loggedConfig is testConfig with the log also kept in the returned buffer.
func loggedConfig(t *testing.T, url string) (runtime.Config, *logBuf) {
	t.Helper()
	cfg := testConfig(t, url)
	lb := &logBuf{w: servertest.LogWriter(t)}
	cfg.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return cfg, lb
}

const noNotifyWarning = "connected without notifications"

// checkUnavailable fails unless err is the refusal of the notification
// subscription: ErrNotificationsUnavailable, with the SUBACK's 0x87.
func checkUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	var be *runtime.BrokerError
	switch {
	case !errors.Is(err, runtime.ErrNotificationsUnavailable):
		t.Errorf("%s: %v, want ErrNotificationsUnavailable", what, err)
	case !errors.As(err, &be) || be.Packet != "SUBACK" || be.ReasonCode != 0x87:
		t.Errorf("%s: %v, want it to carry the SUBACK's 0x87 *BrokerError", what, err)
	case !errors.Is(err, runtime.ErrNotAuthorized):
		t.Errorf("%s: %v, want a 0x87 refusal to match ErrNotAuthorized", what, err)
	}
}

// firstOnly runs an iteration and returns its first error, failing the
// test if it yields more than that one item (it must end at once).
func firstOnly[E any](t *testing.T, what string, seq func(yield func(E, error) bool)) error {
	t.Helper()
	var first error
	n := 0
	for _, err := range seq {
		n++
		if n == 1 {
			first = err
		}
	}
	if n != 1 {
		t.Errorf("%s yielded %d items, want one error and the end", what, n)
	}
	return first
}

// A broker that refuses the notification subscription but grants the
// response topic: the client connects and its requests work; every kind
// of watch and KeyNotify fails at once with ErrNotificationsUnavailable,
// and the service never sees a KEYNOTIFY from it.
func TestNotificationsRefusedRequestsWork(t *testing.T) {
	env := startRules(t, rulesNoNotify)
	cfg, logs := loggedConfig(t, env.url)
	c := dialConfig(t, cfg)
	ctx := testCtx(t)

	checkUnavailable(t, "NotificationsErr", c.NotificationsErr())
	if n := logs.count(noNotifyWarning); n != 1 {
		t.Errorf("%d warnings %q, want one per connection", n, noNotifyWarning)
	}
	if !c.Stats().Connected {
		t.Fatal("not connected")
	}

	if _, err := c.Set(ctx, []byte("a/1"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if v, _, err := c.Get(ctx, []byte("a/1")); err != nil || string(v) != "v" {
		t.Fatalf("Get: %q, %v", v, err)
	}
	before := c.Stats().Requests

	checkUnavailable(t, "Watch", firstOnly(t, "Watch", c.Watch(ctx, []byte("a/1"))))
	checkUnavailable(t, "WatchWith", firstOnly(t, "WatchWith", c.WatchWith(ctx, []byte("a/1"), runtime.WatchOptions{Current: true})))
	k := runtime.NewKey[string](c, []byte("a/1"), codec.String[string]{})
	checkUnavailable(t, "Key.Watch", firstOnly(t, "Key.Watch", k.Watch(ctx)))
	checkUnavailable(t, "WatchPattern", firstOnly(t, "WatchPattern", c.WatchPattern(ctx, "a/*", runtime.PatternWatchOptions{Rescan: -1})))
	tpl := runtime.NewTemplate("a/{n}", runtime.TemplateMember{Name: "V", Path: "v"})
	group := runtime.WatchGroup(ctx, c, tpl, runtime.PatternWatchOptions{Rescan: -1}, func(p []string) (string, string, error) { return p[0], p[0], nil })
	checkUnavailable(t, "WatchGroup", firstOnly(t, "WatchGroup", group))
	checkUnavailable(t, "KeyNotify", c.KeyNotify(ctx, []byte("a/1")))

	if after := c.Stats().Requests; after != before {
		t.Errorf("the watches sent %d requests, want none", after-before)
	}
	if s := c.Stats(); s.Watchers != 0 || s.WatchedKeys != 0 {
		t.Errorf("Stats: %d watchers, %d watched keys left behind", s.Watchers, s.WatchedKeys)
	}
	// Requests still work after the refused watches, and the service
	// served this client's requests but no KEYNOTIFY.
	if _, _, err := c.Get(ctx, []byte("a/1")); err != nil {
		t.Fatalf("Get after the watches: %v", err)
	}
	served, notify := env.caughtUp(t, c)
	if served < 3 || notify != 0 {
		t.Errorf("the service served %d requests and %d KEYNOTIFY of the client, want SET and GETs and no KEYNOTIFY", served, notify)
	}
}

// The same rules that refuse the notification subscription grant it
// once the ACL allows it: a client connecting then watches normally
// (the control of the test above, and proof that the ACL only differs
// in that subscription).
func TestNotificationsGrantedByTheSameRules(t *testing.T) {
	env := startRules(t, rulesNotify)
	cfg, logs := loggedConfig(t, env.url)
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	if err := c.NotificationsErr(); err != nil {
		t.Fatalf("NotificationsErr: %v", err)
	}
	if n := logs.count(noNotifyWarning); n != 0 {
		t.Errorf("%d warnings %q on a granted subscription", n, noNotifyWarning)
	}
	watchSees(t, ctx, c, "b/1")
	if _, notify := env.caughtUp(t, c); notify == 0 {
		t.Error("the service saw no KEYNOTIFY of the watch")
	}
}

// With Config.NotifyWithoutSubscription (for a broker that delivers
// notifications into the session without a subscription, as Azure IoT
// Operations' does) the refusal is logged and watches register anyway.
// mosquitto is not such a broker, so only the registration is checked.
func TestNotifyWithoutSubscriptionWatchesAnyway(t *testing.T) {
	env := startRules(t, rulesNoNotify)
	cfg, logs := loggedConfig(t, env.url)
	cfg.NotifyWithoutSubscription = true
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	if err := c.NotificationsErr(); err != nil {
		t.Fatalf("NotificationsErr: %v", err)
	}
	if logs.count("watching anyway") != 1 {
		t.Error("the refusal was not logged")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev, err := range c.WatchWith(wctx, []byte("c/1"), runtime.WatchOptions{Current: true}) {
		if err != nil || ev.Kind != runtime.EventResync {
			t.Fatalf("first event %+v, %v; want the current state", ev, err)
		}
		break
	}
	if _, notify := env.caughtUp(t, c); notify == 0 {
		t.Error("the service saw no KEYNOTIFY of the watch")
	}
}

// watchSees starts a Watch of key, sets the key, and waits for the event.
func watchSees(t *testing.T, ctx context.Context, c *runtime.Client, key string) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan error, 16)
	go func() {
		for ev, err := range c.WatchWith(wctx, []byte(key), runtime.WatchOptions{Current: true}) {
			if err != nil || ev.Kind == runtime.EventSet {
				events <- err
			}
			if ev.Kind == runtime.EventResync {
				events <- nil // registered
			}
			if err != nil {
				return
			}
		}
	}()
	if err := receive(t, "the watch's first event", events); err != nil {
		t.Fatalf("Watch %s: %v", key, err)
	}
	if _, err := c.Set(ctx, []byte(key), []byte("x"), runtime.SetOptions{}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := receive(t, "the Set event", events); err != nil {
		t.Fatalf("Watch %s: %v", key, err)
	}
}

// Lock.Acquire without notifications: its watch fails at once, and it
// takes the lock by polling once the holder releases it, with a bounded
// number of attempts (it does not spin).
func TestLockAcquireWithoutNotifications(t *testing.T) {
	env := startRules(t, rulesNoNotify)
	holder, waiter := dial(t, env.url), dial(t, env.url)
	ctx := testCtx(t)
	const ttl = time.Second // polls every 500 ms ± 20 %

	held, err := runtime.NewLock(holder, []byte("lock"), ttl).Acquire(ctx)
	if err != nil {
		t.Fatalf("holder Acquire: %v", err)
	}
	before := waiter.Stats().Requests
	start := time.Now()
	got := make(chan error, 1)
	var lease *runtime.Lease
	go func() {
		var err error
		lease, err = runtime.NewLock(waiter, []byte("lock"), ttl).Acquire(ctx)
		got <- err
	}()
	// Let the waiter try (and fail) at least twice: its first attempt and
	// the early retry; then release.
	waitFor(t, "the waiter's attempts", func() bool { return waiter.Stats().Requests-before >= 2 })
	if err := held.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := receive(t, "the waiter's lease", got); err != nil {
		t.Fatalf("waiter Acquire: %v", err)
	}
	elapsed := time.Since(start)
	defer func() { _ = lease.Release(ctx) }()
	// Polling at 400 ms or more after the early retry: a slow machine makes
	// fewer attempts, never more.
	attempts := waiter.Stats().Requests - before
	if bound := 3 + uint64(elapsed/(400*time.Millisecond)); attempts > bound {
		t.Errorf("the waiter sent %d requests in %v, want at most %d: it spins", attempts, elapsed, bound)
	}
	if _, notify := env.caughtUp(t, waiter); notify != 0 {
		t.Errorf("the waiter sent %d KEYNOTIFY, want none", notify)
	}
}

// A reconnection that finds the subscription refused ends the running
// watches with ErrNotificationsUnavailable (a pattern watch too, even one
// that watches no key), and one that finds it granted again makes new
// watches work. The broker restarts without persistence, so each
// reconnection subscribes anew.
func TestNotificationsRefusedAfterReconnect(t *testing.T) {
	env := startRules(t, rulesNotify)
	cfg, logs := loggedConfig(t, env.url)
	c := dialConfig(t, cfg)
	ctx := testCtx(t)

	keyEnd := make(chan error, 1)
	patEnd := make(chan error, 1)
	registered := make(chan struct{}, 1)
	go func() {
		var last error
		for ev, err := range c.WatchWith(ctx, []byte("c/1"), runtime.WatchOptions{Current: true}) {
			if err == nil && ev.Kind == runtime.EventResync {
				select {
				case registered <- struct{}{}:
				default:
				}
			}
			last = err
		}
		keyEnd <- last
	}()
	go func() {
		var last error
		for _, err := range c.WatchPattern(ctx, "nothing/*", runtime.PatternWatchOptions{Rescan: -1}) {
			last = err
		}
		patEnd <- last
	}()
	receive(t, "the watch's registration", registered)

	env.b.SetRules(rulesNoNotify)
	env.b.Restart()
	checkUnavailable(t, "the running Watch's end", receive(t, "the end of the running Watch", keyEnd))
	checkUnavailable(t, "the running WatchPattern's end", receive(t, "the end of the running WatchPattern", patEnd))
	checkUnavailable(t, "NotificationsErr", c.NotificationsErr())
	if n := logs.count(noNotifyWarning); n != 1 {
		t.Errorf("%d warnings %q, want one for the one refusing connection", n, noNotifyWarning)
	}
	// Requests go on working on the new connection.
	if _, err := c.Set(ctx, []byte("c/1"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatalf("Set: %v", err)
	}

	env.b.SetRules(rulesNotify)
	env.b.Restart()
	waitFor(t, "notifications again", func() bool { return c.NotificationsErr() == nil && c.Stats().Connected })
	watchSees(t, ctx, c, "c/2")
}

// A resumed session (the broker kept it) lacks the notification
// subscription it was refused: the reconnection asks for it again, alone,
// so a broker whose rules now grant it makes watches work without a new
// session.
func TestNotificationsGrantedOnResumedSession(t *testing.T) {
	env := startRules(t, rulesNoNotify)
	proxy := faultproxy.Start(t, env.b.Addr())
	cfg, logs := loggedConfig(t, "mqtt://"+proxy.Addr())
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	checkUnavailable(t, "NotificationsErr", c.NotificationsErr())

	// A resumed session asks again: refused again, and warned about once
	// more.
	proxy.Cut()
	waitFor(t, "a reconnection", func() bool { return c.Stats().Reconnects >= 1 && c.Stats().Connected })
	checkUnavailable(t, "NotificationsErr after a resumed session", c.NotificationsErr())
	if s := c.Stats(); s.SessionsLost != 0 {
		t.Fatalf("the session was lost (%d): the test needs a resumed one", s.SessionsLost)
	}
	if n := logs.count(noNotifyWarning); n != 2 {
		t.Errorf("%d warnings %q, want one per connection (2)", n, noNotifyWarning)
	}

	env.b.SetRules(rulesNotify)
	proxy.Cut()
	waitFor(t, "a resumed session with notifications", func() bool { return c.NotificationsErr() == nil && c.Stats().Connected })
	if s := c.Stats(); s.SessionsLost != 0 {
		t.Fatalf("the session was lost (%d): the test needs a resumed one", s.SessionsLost)
	}
	watchSees(t, ctx, c, "d/1")
}
