package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/ssgen/ssgen/internal/logclip"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// transport is one way of putting the engine on MQTT.
type transport interface {
	start(ctx context.Context) error
	addr() string
	close() error
	deliver(engine.Notification)
	// drop is told of a queued notification that will not be delivered
	// (its change was undone).
	drop(engine.Notification)
	// queued is told of a notification before it enters its watcher's
	// queue; false drops it (the embedded broker is cutting that watcher
	// off for its output).
	queued(engine.Notification) bool
}

// Server is a state store: the protocol engine behind either an embedded
// MQTT 5 broker or a client attached to an external one.
type Server struct {
	opts  Options
	log   *slog.Logger
	eng   *engine.Engine
	fan   *serializer[note]
	notes *noteOrder // with Options.Replica: notifications before answers
	// deliverHook, set by tests before Start, runs before each
	// notification is handed to the transport.
	deliverHook func(engine.Notification)
	tr          transport
	disk        *persist.Store       // nil without Options.DataDir
	commit      *persist.GroupCommit // the engine's journal over disk; nil without it

	// Notifications handed to the broker, and dropped before that (see
	// Stats).
	notesSent, notesDropped atomic.Int64

	chaos   atomic.Pointer[chaosSet] // nil: no chaos rules (chaos.go)
	delayed delays                   // answers held by chaos rules

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New validates opts and prepares a server; Start makes it serve.
func New(opts Options) (*Server, error) {
	if opts.MaxKeys < 0 || opts.MaxBytes < 0 {
		return nil, fmt.Errorf("%w: negative quota", ErrInvalidOptions)
	}
	if err := opts.Limits.validate(opts.Broker != ""); err != nil {
		return nil, err
	}
	if err := opts.Security.Validate(opts.Broker != ""); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	if opts.FaultInjection && opts.Broker != "" {
		return nil, fmt.Errorf("%w: FaultInjection needs the embedded broker", ErrInvalidOptions)
	}
	if opts.Clock != nil {
		if opts.Now != nil {
			return nil, fmt.Errorf("%w: Clock and Now exclude each other", ErrInvalidOptions)
		}
		// Versions written on a clock moved ahead would outlive the
		// server: a restart moves its clock past the stored versions, and
		// clients would refuse every version it hands out.
		if opts.DataDir != "" {
			return nil, fmt.Errorf("%w: Clock and DataDir exclude each other (versions written on a moved clock would outlive it)", ErrInvalidOptions)
		}
		opts.Now = opts.Clock.Now
	}
	if opts.PersistAll && opts.DataDir == "" {
		return nil, fmt.Errorf("%w: PersistAll needs a DataDir", ErrInvalidOptions)
	}
	// Every value of a log line is cut to 1 KiB: client ids, keys, stamps
	// and reasons come from clients (logclip).
	s := &Server{opts: opts, log: logclip.Logger(opts.Logger, 0)}
	if len(opts.Chaos) > 0 {
		set, err := compileChaos(opts.Chaos)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		s.chaos.Store(set)
	}
	if opts.Broker != "" {
		ext, err := newExternal(s)
		if err != nil {
			return nil, err
		}
		s.tr = ext
	} else {
		if opts.Listen != "" {
			if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
				return nil, fmt.Errorf("%w: listen address %q: %v", ErrInvalidOptions, opts.Listen, err)
			}
		}
		s.tr = newEmbedded(s)
	}
	s.fan = newSerializer(s.deliver)
	if opts.Replica != nil {
		s.notes = newNoteOrder()
	}
	cfg := engine.Config{
		Now:      opts.Now,
		MaxKeys:  opts.MaxKeys,
		MaxBytes: opts.MaxBytes,

		MaxKeyBytes:         opts.Limits.MaxKeyBytes,
		MaxValueBytes:       opts.Limits.MaxValueBytes,
		MaxWatchesPerClient: opts.Limits.maxWatches(),

		MaxWatchBytesPerClient: watchQuota(opts.Limits.MaxWatchBytesPerClient, DefaultMaxWatchBytesPerClient),
		MaxWatches:             watchQuota(opts.Limits.MaxWatches, DefaultMaxWatches),
		MaxWatchBytes:          watchQuota(opts.Limits.MaxWatchBytes, DefaultMaxWatchBytes),

		OnChange: opts.OnKeyChange,
		OnNotify: func(n engine.Notification) {
			if s.tr.queued(n) {
				s.fan.push(n.Client, note{n, s.notes != nil && s.notes.add(n.Wait)})
			}
		},
	}
	// Opened last: nothing built above holds resources before Start, so
	// a store that fails to open or load leaves nothing to release.
	if err := s.openDisk(&cfg); err != nil {
		return nil, err
	}
	s.eng = engine.New(cfg)
	if err := s.restore(); err != nil {
		_ = s.closeDisk()
		return nil, err
	}
	if opts.Clock != nil {
		opts.Clock.onMove(s.clockMoved)
	}
	return s, nil
}

// Start binds the listener (embedded) or connects to the broker
// (external), and runs the engine's expiry loop until Close.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.started:
		return ErrStarted
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.tr.start(ctx); err != nil {
		cancel()
		_ = s.tr.close()
		return err
	}
	s.started = true
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.eng.Run(ctx)
	}()
	s.log.Info("state store serving", "url", s.URL())
	if _, ok := s.tr.(*external); ok {
		// Issue #25 (F1): no broker tells its subscribers who published a
		// message, so the requester is whoever __srcId names.
		s.log.Warn(externalIdentityWarning)
	}
	return nil
}

// externalIdentityWarning is logged when a server starts in external
// mode: it cannot verify who sent a request (docs/security.md#external-mode).
const externalIdentityWarning = "external mode: the requester is whoever __srcId names, which no broker verifies; " +
	"any client of the broker can be answered in another's response topic, register KEYNOTIFY for it or stop its registrations. " +
	"Use the embedded broker, or one broker per tenant, where clients must be kept apart"

// Addr is the host:port the server serves on: the embedded listener's
// bound address, or the external broker's address.
func (s *Server) Addr() string { return s.tr.addr() }

// URL is Addr as mqtt://host:port, the form clients are configured with;
// mqtts://host:port when the embedded listener speaks TLS.
func (s *Server) URL() string {
	if s.opts.Broker == "" && s.opts.Security.TLS != nil {
		return "mqtts://" + s.Addr()
	}
	return "mqtt://" + s.Addr()
}

// Engine is the state store behind the server, for seeding and inspecting
// keys (Put, Lookup, ...) and for driving expiry (Expire) under a fake
// clock.
func (s *Server) Engine() *engine.Engine { return s.eng }

// Dropped counts the responses and notifications the embedded broker
// could not queue for a client (full outbound queue or in-flight table);
// they are also logged. It is always 0 in external mode, where the other
// broker does its own (invisible) dropping.
func (s *Server) Dropped() int64 {
	if e, ok := s.tr.(*embedded); ok {
		return e.dropped.Load()
	}
	return 0
}

// Close stops serving: the expiry loop, the broker or broker connection,
// and the notification queues. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.started {
		return s.closeDisk()
	}
	s.cancel()
	s.delayed.close()
	if s.notes != nil {
		s.notes.close()
	}
	s.fan.close()
	err := s.tr.close()
	s.wg.Wait()
	// Last: the transport and the expiry loop may write until they stop.
	return errors.Join(err, s.closeDisk())
}

// Stats are counters of the embedded broker's limits (all 0 in external
// mode). Counters only grow; Connections and KeptSessions are current.
type Stats struct {
	// Dropped is Server.Dropped: responses and notifications that could
	// not be queued for a client.
	Dropped int64
	// AcceptErrors counts failed accepts (out of file descriptors, say),
	// each retried after a back-off.
	AcceptErrors int64
	// ConnectionsRefused counts connections over MaxConnections or
	// MaxConnectionsPerIP: answered CONNACK 0x97, or closed at accept.
	ConnectionsRefused int64
	// ConnectTimeouts counts connections closed for not completing CONNECT
	// within ConnectTimeout; ConnectTooLarge those whose first packet was
	// larger than MaxConnectBytes.
	ConnectTimeouts int64
	ConnectTooLarge int64
	// OutputDisconnects counts clients disconnected (0x97) for holding
	// more than MaxClientOutputBytes of unacknowledged messages.
	OutputDisconnects int64
	// SessionsEvicted counts kept sessions ended to stay within
	// MaxSessions; SessionsExpired kept sessions ended by their expiry.
	SessionsEvicted int64
	SessionsExpired int64
	// Connections is the number of open connections; KeptSessions the
	// number of sessions kept for disconnected clients.
	Connections  int
	KeptSessions int
	// Persist are the data file's group commit totals (all 0 without
	// DataDir), in both modes.
	Persist PersistStats
	// NotificationsSent counts KEYNOTIFY notifications handed to the
	// broker (both modes); NotificationsDropped those the embedded broker
	// could not queue (also counted in Dropped).
	NotificationsSent    int64
	NotificationsDropped int64
}

// Stats returns the embedded broker's limit counters and the persistence
// totals.
func (s *Server) Stats() Stats {
	var persist PersistStats
	if s.commit != nil {
		persist = s.commit.Totals()
	}
	e, ok := s.tr.(*embedded)
	if !ok {
		return Stats{Persist: persist, NotificationsSent: s.notesSent.Load()}
	}
	return Stats{
		Persist:              persist,
		NotificationsSent:    s.notesSent.Load(),
		NotificationsDropped: s.notesDropped.Load(),
		Dropped:              e.dropped.Load(),
		AcceptErrors:         e.stats.acceptErrors.Load(),
		ConnectionsRefused:   e.stats.refused.Load(),
		ConnectTimeouts:      e.stats.connectTimeouts.Load(),
		ConnectTooLarge:      e.stats.connectTooLarge.Load(),
		OutputDisconnects:    e.stats.outputKicks.Load(),
		SessionsEvicted:      e.stats.sessionsEvicted.Load(),
		SessionsExpired:      e.stats.sessionsExpired.Load(),
		Connections:          e.lim.openConns(),
		KeptSessions:         e.sessions.kept(),
	}
}
