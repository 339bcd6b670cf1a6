package engine

import (
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// Config configures an Engine. The zero value is usable.
type Config struct {
	// Now is the physical time source (time.Now by default). Tests pass a
	// FakeClock's Now to fast-forward expiry and skew without sleeping.
	Now func() time.Time
	// NodeID is the node id of the versions the engine assigns
	// ("StateStore" by default, as in the public article). A ':' would make
	// the versions unparsable, so New replaces each one with '_'.
	NodeID string
	// MaxDrift is the drift clients enforce: how far ahead of their
	// physical clock a received __ts may be (one minute by default, as in
	// docs/wire-protocol.md#versions-and-the-clock). The engine accepts a request __ts or __ft at most
	// MaxDrift - DriftMargin ahead of Now, which keeps every version it
	// hands out within what those clients accept (see DriftMargin).
	MaxDrift time.Duration
	// MaxKeys and MaxBytes are quotas (0 = unlimited). MaxBytes counts key
	// and value bytes. A request that would exceed either is answered with
	// ErrQuotaExceeded and changes nothing.
	MaxKeys  int
	MaxBytes int64
	// MaxKeyBytes and MaxValueBytes bound one key (in every command that
	// names a key) and one SET value; MaxWatchesPerClient bounds the
	// KEYNOTIFY registrations of one client. 0 = unlimited. Exceeding one
	// is answered ErrQuotaExceeded and changes nothing.
	MaxKeyBytes         int
	MaxValueBytes       int
	MaxWatchesPerClient int
	// MaxKeptKeyBytes bounds the key of a write that is kept (Journal set,
	// and Request.Persist or PersistAll): the longest key the Journal's
	// store can hold. 0 = unlimited. A longer kept write is answered
	// ErrQuotaExceeded and changes nothing; the same key written without
	// being kept is bound by MaxKeyBytes only.
	MaxKeptKeyBytes int
	// MaxWatchBytesPerClient bounds the sum of the lengths of the keys one
	// client is registered for; MaxWatches and MaxWatchBytes bound the
	// registrations of all clients together and the sum of their keys'
	// lengths (each registration holds its own copy of its key). 0 =
	// unlimited; a registration over any is answered ErrQuotaExceeded.
	// Renewing one a client holds always passes.
	MaxWatchBytesPerClient int64
	MaxWatches             int
	MaxWatchBytes          int64
	// OnNotify receives every notification, in the order the changes
	// happened, synchronously while the engine holds its lock: it must not
	// block and must not call back into the engine.
	OnNotify func(Notification)
	// OnChange, when set, is told of every change of the key space: a key
	// stored (SET, Put, Import) or removed (DEL, VDEL, Delete, expiry), or
	// put back by Abandon,
	// after the change, synchronously while the engine holds its lock; like
	// OnNotify it must not block and must not call back into the engine.
	// key is the engine's own copy: read it, never keep a reference.
	OnChange func(key string, deleted bool)
	// Journal, when set, makes changes durable (see Journal): the engine
	// hands it the changes of each write that touches a kept key, in
	// order, and holds back every answer and notification that depends on
	// them until the journal has them on disk. Which writes are kept is
	// chosen by Request.Persist and PersistAll; deletions and expiries of
	// kept keys are passed too (a failed expiry is not retried: the
	// record's absolute deadline makes Restore drop it).
	Journal Journal
	// PersistAll keeps every written key, as if each request had Persist.
	PersistAll bool
	// JournalWatches hands the Journal KEYNOTIFY registrations too
	// (Change.Watch): a replicated store, whose next leader must notify
	// the same clients. The local store keeps none.
	JournalWatches bool
}

// Request is one decoded state store request.
type Request struct {
	// Args are the RESP3 request's bulk strings (verb first). They may alias
	// the MQTT payload; the engine copies what it keeps.
	Args [][]byte
	// Client is the MQTT client id of the requester; KEYNOTIFY
	// registrations belong to it.
	Client string
	// Timestamp is the raw __ts user property; HasTimestamp tells whether it
	// was present at all.
	Timestamp    string
	HasTimestamp bool
	// FencingToken is the raw __ft user property, if HasFencingToken.
	FencingToken    string
	HasFencingToken bool
	// Persist asks that a SET's key be kept durable (the aio-persistence
	// user property). A SET without it makes the key volatile again unless
	// Config.PersistAll is set.
	Persist bool
	// Visible, when set, says which keys the requester may see: SCAN lists
	// only those (authorization). Hidden keys still move the continuation
	// token along, so paging never skips a visible key; tokens are sealed,
	// so they do not name the hidden key (scantoken.go).
	Visible func(key []byte) bool
	// VisibleCost, when set with Visible, is what Visible costs for a key
	// of n bytes, in the units of glob.Pattern.Cost: SCAN counts it in its
	// matching budget, so a costly rule set lists fewer keys per request
	// instead of holding the lock longer.
	VisibleCost func(n int) int
	// TokenScope is what SCAN continuation tokens are bound to besides the
	// pattern: a token is accepted only in a request of the same scope.
	// The server sets it to the authorization rules that name the
	// requester, so that a token moves only between clients that may
	// read the same keys; empty without authorization (every client may
	// read every key), which lets a listing resume under another client
	// id (a new process of a CLI).
	TokenScope string
	// Transition, when set on a SET, judges the write against the value
	// it replaces, inside the engine's critical section, so that no other
	// write comes between the value judged and the one stored: the engine
	// calls it with the key's current value and its version when the key
	// exists and the SET is about to be applied (after its condition,
	// fencing and quota checks). A non-empty Error refuses the SET with
	// that -ERR text, and nothing changes. It must not call the engine,
	// nor modify old (which it may keep: a stored value is never changed
	// in place), and it holds the engine's lock: its cost must not grow
	// with len(old). The server sets it for --enforce with transition
	// rules; nil costs one comparison.
	Transition func(old []byte, version hlc.HLC) Error
}

// Result is the engine's answer to a Request.
type Result struct {
	// Payload is the RESP3 response, never empty. Fixed answers (+OK, :1,
	// $-1, -ERR ...) share one read-only buffer between results: publish
	// it, never modify it.
	Payload []byte
	// Version is the __ts to put on the response; the zero HLC means the
	// response carries no __ts (a GET miss, an error).
	Version hlc.HLC
	// Wait, when not 0, is the journal sequence number the answer depends
	// on (Decide only; Handle has already waited): the request's own
	// change, or a change it saw that is not durable yet. The answer must
	// not be published before Journal.Wait(Wait) returns nil; when it
	// returns an error, the request is to be answered ErrPersistence
	// instead, and it has changed nothing (see Journal).
	Wait uint64
	// Err is the refusal the payload answers ("-ERR " + Err), "" when
	// the request was served: what the server's logs, trace and metrics
	// read, so that nothing parses a payload back.
	Err Error
	// Why says, on a refusal decided by a request's stamps, what was
	// compared: the fencing tokens, or how far ahead a __ts or __ft was;
	// on one decided before the engine (Refusal), what decided it. It is
	// for logs and the console, never sent; empty otherwise.
	Why string
}

// Notification is a KEYNOTIFY notification for one watching client.
type Notification struct {
	Client  string  // the watching client's MQTT client id
	Key     []byte  // the key that changed (owned by the notifications of this change; read-only)
	Payload []byte  // NOTIFY SET VALUE v, or NOTIFY DELETE (shared likewise; read-only)
	Version hlc.HLC // the __ts of the notification
	// Wait, when not 0, is the journal sequence number the change depends
	// on: the notification must not be delivered before Journal.Wait(Wait)
	// returns nil, and must be dropped when it returns an error (the
	// change was undone). Later notifications of the same watcher queue
	// behind it, keeping the order of the changes.
	Wait uint64
}

// Engine is the state store: keys with their values, versions, fencing
// tokens and deadlines, plus the KEYNOTIFY registrations. It is safe for
// concurrent use; one mutex serialises every request, so the responses and
// notifications happen in one total order.
type Engine struct {
	now      func() time.Time
	clock    *hlc.Clock
	accept   time.Duration // acceptWindow(Config.MaxDrift)
	maxKeys  int
	maxBytes int64
	lim      limits
	onNotify func(Notification)
	onChange func(key string, deleted bool)
	// journal and persistAll are Config.Journal and Config.PersistAll.
	journal    Journal
	persistAll bool
	// journalWatches is Config.JournalWatches.
	journalWatches bool

	// wake tells Run that the earliest deadline moved earlier.
	wake chan struct{}

	mu       sync.Mutex
	keys     map[string]*entry
	order    keyIndex   // the keys of keys, in byte-wise order (store.go)
	scanLim  scanLimits // zero: the defaults (scan.go)
	tokens   *tokenSealer
	deadline deadlineHeap
	bytes    int64 // sum of len(key)+len(value) over keys
	watch    watchers
	// What the journal has not yet made durable (journal.go).
	unsettled
}

// New returns an empty engine. Start Run in a goroutine for active expiry.
func New(cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NodeID == "" {
		cfg.NodeID = protocol.ServiceNodeID
	}
	cfg.NodeID = strings.ReplaceAll(cfg.NodeID, ":", "_")
	if cfg.MaxDrift <= 0 {
		cfg.MaxDrift = hlc.DefaultMaxDrift
	}
	return &Engine{
		now: cfg.Now,
		// The engine checks drift itself against its accept window (to
		// choose between the __ts and __ft messages); the clock's own bound
		// is set wider so that escaping a counter overflow (see tick) is
		// never refused.
		clock:    hlc.NewClock(cfg.NodeID, hlc.WithNow(cfg.Now), hlc.WithMaxDrift(2*cfg.MaxDrift+time.Second)),
		accept:   acceptWindow(cfg.MaxDrift),
		maxKeys:  cfg.MaxKeys,
		maxBytes: cfg.MaxBytes,
		lim: limits{
			key: cfg.MaxKeyBytes, keptKey: cfg.MaxKeptKeyBytes, value: cfg.MaxValueBytes, watches: cfg.MaxWatchesPerClient,
			watchBytes: cfg.MaxWatchBytesPerClient, allWatches: cfg.MaxWatches, allWatchBytes: cfg.MaxWatchBytes,
		},
		onNotify:   cfg.OnNotify,
		journal:    cfg.Journal,
		onChange:   cfg.OnChange,
		persistAll: cfg.PersistAll,

		journalWatches: cfg.JournalWatches,
		wake:           make(chan struct{}, 1),
		keys:           make(map[string]*entry),
		watch:          newWatchers(),
		tokens:         newTokenSealer(),
		unsettled:      unsettled{pending: make(map[string]uint64)},
	}
}

// Handle executes one request and returns its response. Notifications the
// request causes (and those of keys found expired on the way) are delivered
// to Config.OnNotify before Handle returns. With a Journal, Handle returns
// once the answer may be published: after the changes it depends on are
// durable, or with ErrPersistence (and nothing changed) when they could
// not be made so.
func (e *Engine) Handle(req Request) Result { return e.Settle(e.Decide(req)) }

// Settle waits until what res, a result of Decide, waits for is durable,
// and returns it with Wait zero; or, when that could not be made durable,
// the persistence error.
func (e *Engine) Settle(res Result) Result {
	if res.Wait == 0 {
		return res
	}
	if err := e.journal.Wait(res.Wait); err != nil {
		return errResult(ErrPersistence)
	}
	res.Wait = 0
	return res
}

// Decide is Handle without the wait for the disk: it returns as soon as
// the engine has decided, with Result.Wait telling what the answer still
// waits for. Requests of other clients are decided meanwhile; a transport
// publishes the answers of Decide in the order Journal.Wait lets it.
func (e *Engine) Decide(req Request) Result {
	if len(req.Args) == 0 {
		return errResult(ErrSyntax)
	}
	switch string(req.Args[0]) {
	case protocol.VerbSet, protocol.VerbGet, protocol.VerbDel, protocol.VerbVDel, protocol.VerbKeyNotify, protocol.VerbScan:
	default:
		return errResult(ErrUnknownCommand)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.reap(now)
	e.cur = e.dependsOn(req.Args)
	var res Result
	// Direct calls (not a table of funcs) keep req on the stack.
	switch string(req.Args[0]) {
	case protocol.VerbSet:
		res = e.set(&req, now)
	case protocol.VerbGet:
		res = e.get(&req, now)
	case protocol.VerbDel:
		res = e.del(&req, now)
	case protocol.VerbVDel:
		res = e.vdel(&req, now)
	case protocol.VerbKeyNotify:
		res = e.keynotify(&req, now)
	default:
		res = e.scan(&req, now)
	}
	res.Wait, e.cur = e.cur, 0
	return res
}

// DropClient removes every KEYNOTIFY registration of client; the transport
// calls it when the client disconnects.
func (e *Engine) DropClient(client string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.watch.byClient[client]) > 0 {
		e.journalWatch(client, "", true)
		e.cur = 0 // nothing waits for it
	}
	e.watch.dropClient(client)
}

// Fixed payloads, shared read-only by every result that carries them (cap
// == len so that an append by a careless caller copies).
var (
	payloadOK       = fixed(resp3.AppendOK(nil))
	payloadOne      = fixed(resp3.AppendInteger(nil, 1))
	payloadZero     = fixed(resp3.AppendInteger(nil, 0))
	payloadMinusOne = fixed(resp3.AppendInteger(nil, -1))
	payloadNull     = fixed(resp3.AppendNull(nil))
	errPayloads     = map[Error][]byte{}
)

func init() {
	for _, e := range protocol.Errors {
		errPayloads[Error(e.Text)] = fixed(resp3.AppendError(nil, e.Text))
	}
}

func fixed(b []byte) []byte { return b[:len(b):len(b)] }

// errResult is the answer to a refused request: an -ERR payload and no __ts.
func errResult(err Error) Result {
	if p, ok := errPayloads[err]; ok {
		return Result{Payload: p, Err: err}
	}
	return Result{Payload: resp3.AppendError(nil, string(err)), Err: err}
}

// Refusal is the answer to a request refused before the engine saw it (a
// payload that is not a request, a request the authorization rules do not
// grant), shaped as the engine's own refusals are; why says what decided
// it (Result.Why).
func Refusal(err Error, why string) Result {
	res := errResult(err)
	res.Why = why
	return res
}
