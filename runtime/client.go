package runtime

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// Client is a state store client over one MQTT 5 connection that it keeps
// alive. It is safe for concurrent use.
type Client struct {
	cfg          Config
	log          *slog.Logger
	clock        *hlc.Clock
	respTopic    string
	notifyPrefix string
	backoff      backoff

	mu    sync.Mutex
	cur   *conn         // the live connection, nil while reconnecting
	ready chan struct{} // closed while cur != nil

	closing   chan struct{} // closed by Close, under bgMu
	closeOnce sync.Once
	loopDone  chan struct{}
	bgMu      sync.Mutex     // orders starting background work against Close
	bg        sync.WaitGroup // background requests (KEYNOTIFY STOP, re-registration)

	pending correlator
	sem     *semaphore
	watches registry
	guards  guardTable // leases held and guarded operations' turns, per lock
	calls   sync.Pool  // of *call

	patterns patternHub // WatchPattern iterations, told of reconnects and own writes

	listeners listeners // the features' (watches, patterns), registered in Dial

	// notif is the refusal of the notification subscription on the latest
	// connection (the live one, or the last one while reconnecting); nil
	// while it is granted.
	notif atomic.Pointer[notifyRefusedError]

	st counters
}

// Dial connects to the broker and returns a Client that keeps the
// connection up until Close. The first connection is retried (with
// backoff) until ctx ends or Config.ConnectTimeout passes; an error that
// retrying cannot fix (bad configuration, refused credentials) returns at
// once.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:          cfg,
		log:          cfg.Logger.With("client_id", cfg.ClientID),
		respTopic:    ResponseTopic(cfg.ClientID),
		notifyPrefix: NotifyTopicPrefix(cfg.ClientID),
		backoff:      backoff{min: cfg.ReconnectMin, max: cfg.ReconnectMax},
		ready:        make(chan struct{}),
		closing:      make(chan struct{}),
		loopDone:     make(chan struct{}),
		sem:          newSemaphore(1),
	}
	opts := []hlc.Option{hlc.WithNow(cfg.Now)}
	if cfg.MaxDrift > 0 {
		opts = append(opts, hlc.WithMaxDrift(cfg.MaxDrift))
	}
	c.clock = hlc.NewClock(nodeID(cfg.ClientID), opts...)
	// The features built on the core register their listeners.
	c.watches.init(c)
	c.patterns.init(c)

	first, err := c.dialFirst(ctx)
	if err != nil {
		return nil, err
	}
	c.setConn(first)
	go c.run(first)
	return c, nil
}

// dialFirst makes the first connection, retrying transient failures.
func (c *Client) dialFirst(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	for n := 0; ; n++ {
		cn, err := c.connect(ctx, true)
		if err == nil {
			return cn, nil
		}
		if c.cfg.DialOnce || !retryableConnectError(err) {
			return nil, err
		}
		c.log.Debug("connect failed, retrying", "attempt", n+1, "err", err)
		t := time.NewTimer(c.backoff.delay(n + 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// Close ends the session (DISCONNECT with Session Expiry 0), fails the
// requests still in flight with ErrClosed and ends every Watch. It waits
// for the client's goroutines to finish.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.bgMu.Lock()
		close(c.closing)
		c.bgMu.Unlock()
	})
	<-c.loopDone
	c.bg.Wait()
	return nil
}

// background runs f in a goroutine that Close waits for, unless the Client
// is closing: then f does not run. Checking and counting under bgMu keeps
// an Add from racing Close's Wait (a watcher ending as the Client closes).
func (c *Client) background(f func()) {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.isClosing() {
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		f()
	}()
}

// NotificationsErr is nil while the broker grants this client's
// subscription to its notification topic. Otherwise it is the error
// (matching ErrNotificationsUnavailable, unwrapping to the SUBACK's
// *BrokerError) with which every watch and KeyNotify fails at once:
// requests work, notifications cannot. It reports the latest connection,
// the live one or, while reconnecting, the last one. Every connection
// subscribes again, except one that resumed a session which holds the
// subscription already, so a broker that grants it again (its rules
// changed) makes watches work again from the next connection on.
func (c *Client) NotificationsErr() error {
	if e := c.notif.Load(); e != nil {
		return e
	}
	return nil
}

// ClientID is the MQTT client id, also the HLC node id and __srcId.
func (c *Client) ClientID() string { return c.cfg.ClientID }

// Clock is the client-wide hybrid logical clock: every request's __ts
// comes from it and every received __ts is merged into it.
func (c *Client) Clock() *hlc.Clock { return c.clock }

// Stats is a snapshot of the client's counters.
type Stats struct {
	Requests      uint64 // requests published
	Errors        uint64 // requests that failed (not counting ErrNotFound / ErrConditionNotMet)
	Timeouts      uint64 // of Errors, timeouts
	ConnLost      uint64 // of Errors, failed by a lost connection
	Connects      uint64 // successful connections, the first included
	Reconnects    uint64 // Connects after the first
	SessionsLost  uint64 // reconnections that found no session (CONNACK Session Present 0)
	InFlight      int64  // requests between call and return
	LateResponses uint64 // responses nobody waited for any more
	NoService     uint64 // requests resent because no state store was subscribed (PUBACK 0x10)
	Notifications uint64 // notifications received
	// RefusedNotifications counts, of Notifications, those dropped because
	// their __ts was missing, malformed or refused by the client's clock
	// (more than Config.MaxDrift ahead); each is logged, and the key's
	// watchers get an EventResync instead.
	RefusedNotifications uint64
	Resyncs              uint64 // Resync events emitted
	Overflows            uint64 // events dropped because a watcher's buffer was full
	Watchers             int    // active Watch iterations
	WatchedKeys          int    // keys with a KEYNOTIFY registration wanted
	Connected            bool
}

type counters struct {
	requests, errors, timeouts, connLost atomic.Uint64
	connects, sessionsLost, late, notifs atomic.Uint64
	resyncs, overflows, noService        atomic.Uint64
	refusedNotifs                        atomic.Uint64
	inFlight                             atomic.Int64
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	w, k := c.watches.counts()
	c.mu.Lock()
	connected := c.cur != nil
	c.mu.Unlock()
	conns := c.st.connects.Load()
	return Stats{
		Requests:             c.st.requests.Load(),
		Errors:               c.st.errors.Load(),
		Timeouts:             c.st.timeouts.Load(),
		ConnLost:             c.st.connLost.Load(),
		Connects:             conns,
		Reconnects:           max(conns, 1) - 1,
		SessionsLost:         c.st.sessionsLost.Load(),
		InFlight:             c.st.inFlight.Load(),
		LateResponses:        c.st.late.Load(),
		NoService:            c.st.noService.Load(),
		Notifications:        c.st.notifs.Load(),
		RefusedNotifications: c.st.refusedNotifs.Load(),
		Resyncs:              c.st.resyncs.Load(),
		Overflows:            c.st.overflows.Load(),
		Watchers:             w,
		WatchedKeys:          k,
		Connected:            connected,
	}
}

func (c *Client) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}
