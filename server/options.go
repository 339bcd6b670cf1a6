package server

import (
	"errors"
	"log/slog"
	"time"
)

// DefaultListen is where the embedded broker listens unless told otherwise,
// the port every MQTT client tries first.
const DefaultListen = "127.0.0.1:1883"

// Options configures a Server. The zero value runs an embedded broker on
// DefaultListen.
type Options struct {
	// Listen is the TCP address of the embedded broker ("127.0.0.1:0" picks
	// a free port; Addr tells which). Ignored when Broker is set.
	Listen string
	// Broker switches to external mode: the state store attaches as an
	// ordinary client to this MQTT 5 broker, given as mqtt://host:port
	// (tcp:// is accepted too).
	Broker string
	// ClientID is the service's MQTT client id in external mode
	// ("ssgen-statestore-" and random hex by default).
	ClientID string
	// SlowBroker is external mode's bound on the broker's round trip: after
	// each connection the service times a dozen request-like round trips
	// through the broker, and logs one warning (once per Server) if the
	// fastest of the last six took longer. A broker that holds small packets back
	// (mosquitto without set_tcp_nodelay true: Nagle's algorithm) delays
	// every client's request as much. 0 means DefaultSlowBroker (20 ms);
	// negative turns the check off.
	SlowBroker time.Duration
	// MaxKeys and MaxBytes are the store's quotas (0 = unlimited); see
	// engine.Config.
	MaxKeys  int
	MaxBytes int64
	// Limits bound one request and one client; see Limits.
	Limits Limits
	// Security sets up TLS, authentication and authorization of the
	// embedded broker; see Security.
	Security Security
	// Now is the engine's clock (time.Now by default); pass an
	// engine.FakeClock's Now to control expiry and skew in tests.
	Now func() time.Time
	// Clock, when set, is the state store's time instead of Now (which
	// must then be nil): a clock that moves only when told, through
	// Server.AdvanceClock and SetClock or the HTTP API (ClockHandler),
	// each move expiring what fell due. See ManualClock. It excludes
	// DataDir: versions written on a clock moved ahead would be restored
	// with the store, and every later version would be ahead too.
	Clock *ManualClock
	// Logger receives connection events and every refused request with its
	// reason (slog.Default() when nil).
	Logger *slog.Logger
	// DataDir, when set, keeps keys on disk (a bbolt file, StoreFile, in
	// this directory, created if missing, with a write-ahead log in front
	// of it, LogPrefix files): New loads them, and a write of a kept key is
	// answered only once it is on disk. Concurrent writes share one log
	// record and its fdatasync (group commit). Which keys are kept is chosen per SET
	// by the aio-persistence user property, or PersistAll.
	DataDir string
	// PersistAll keeps every key, not only those whose last SET carried
	// aio-persistence=true. It needs DataDir.
	PersistAll bool
	// Replica, when set, keeps every key (and the KEYNOTIFY registrations
	// and the clock's high-water mark) in a store outside the process
	// that several servers share, one serving at a time: package
	// server/etcdstore. New loads the engine from it; every change is
	// answered only once the replica holds it. Each time the server
	// attaches to the broker, before it subscribes to requests, it sends
	// every registration one notification of its key's state
	// (engine.Engine.NotifyCurrent): a change the previous server
	// acknowledged but did not get to notify reaches its watchers, ahead
	// of any change made here. It needs Broker and excludes DataDir.
	Replica Replica
	// DirectCommits commits each group of kept writes straight into the
	// bbolt file (one transaction, two fdatasyncs) instead of the default:
	// one record appended to a write-ahead log and one fdatasync, the
	// bbolt file being brought up to date by checkpoints off the request
	// path. A start replays a log left in DataDir either way, so a data
	// directory can be opened with and without it. It needs DataDir.
	DirectCommits bool
	// OnRequest, when set, is told of every request after it was answered
	// or dropped, in the requester's goroutine: it must be quick and must
	// not block (the web console copies the event into a ring and
	// returns). See RequestEvent.
	OnRequest func(*RequestEvent)
	// OnKeyChange, when set, is told of every change of the key space (a
	// key stored or removed, expiry included) while the engine holds its
	// lock: it must not block and must not call into the server.
	OnKeyChange func(key string, deleted bool)
	// Repair lets New start on a damaged data file (one that fails its
	// checks: a lost meta page, a truncated file, a bad page, a record whose
	// checksum does not match) instead of failing with a *DamageError: the
	// readable keys are copied into a new file, every key or page left out
	// is logged, and the damaged file is kept as StoreFile.damaged-<UTC
	// time>. It does nothing to a sound file. It needs DataDir.
	Repair bool
	// ReservedClientIDs are client ids that belong to the service's own
	// tools and that no MQTT client may use: the web console adds the one
	// it acts as (console.Install), since authorization rules may name it.
	// The embedded broker refuses a CONNECT with one (CONNACK 0x86); in
	// external mode, where the other broker decides who connects, a request
	// whose __srcId is one is dropped.
	ReservedClientIDs []string
	// Chaos are the chaos rules the server starts with (ssgen serve
	// --chaos FILE; LoadChaos reads one): state store requests that match
	// a rule get its effect, an -ERR answer, no answer, a held answer or a
	// disconnect. SetChaos replaces them while the server runs, and
	// ChaosHandler serves them over HTTP. See ChaosRule.
	Chaos []ChaosRule
	// FaultInjection makes the embedded broker honour the fault
	// vocabulary of Microsoft's SDK tests: user properties a client puts
	// on its own CONNECT, PUBLISH, SUBSCRIBE or UNSUBSCRIBE asking to be
	// refused or disconnected (fault:rejectconnect, fault:disconnect, ...;
	// see docs/testing.md). Off, such properties change nothing. It is for
	// tests only, since it lets any client have itself disconnected at
	// will; it needs the embedded broker.
	FaultInjection bool
	// OnCommit, when set, is told of every commit of the durable store
	// (DataDir): how long it took, how many changes and writes it carried,
	// and whether it failed. It runs in the committing goroutine, before
	// the answers that waited for the commit go out, and must return
	// quickly (a metrics histogram, say). Stats().Persist has the running
	// totals.
	OnCommit func(CommitEvent)
	// Enforce says what happens to a SET that WriteCheck finds at fault
	// (ssgen serve --schema FILE --enforce): nothing (EnforceOff, the
	// default), a warning in the log (EnforceWarn), or an -ERR answer
	// naming the declaration and field path (EnforceRefuse). Off, or
	// without WriteCheck, no write is looked at.
	Enforce Enforce
	// WriteCheck, when set, judges the value of a SET before the engine
	// decides it: nil when the value fits, else what is wrong. Keys it
	// does not know about (undeclared keys) it must let through.
	WriteCheck func(key, value []byte) *WriteProblem
	// TransitionCheck, when set, judges a SET against the transition
	// rules of the schema (immutable, monotonic fields): given the key and
	// the new value it returns nil when the key has no rules (or the value
	// does not decode), else a Transition whose Judge the engine runs on
	// the key's current value inside its critical section
	// (engine.Request.Transition), so that two writers racing over one old
	// value cannot both pass. Enforce applies to what it finds as to
	// WriteCheck's.
	TransitionCheck func(key, value []byte) *Transition
}

// Errors returned by Server methods; match them with errors.Is.
var (
	// ErrInvalidOptions wraps every problem found in Options.
	ErrInvalidOptions = errors.New("server: invalid options")
	// ErrStarted is returned by a second Start.
	ErrStarted = errors.New("server: already started")
	// ErrClosed is returned by Start after Close.
	ErrClosed = errors.New("server: closed")
	// ErrConnect wraps the failure of external mode's first connection.
	ErrConnect = errors.New("server: cannot connect to broker")
)
