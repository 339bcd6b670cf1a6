package persist

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ssgen/ssgen/server/engine"
)

// GroupCommit is the engine's Journal over the durable store: the changes
// the engine appends while a transaction is on disk go together into the
// next one, so concurrent kept writes share one write-ahead log record and
// its fdatasync (wal.go; with DirectCommits one bbolt transaction
// and its fsyncs) instead of paying one each.
//
// Two goroutines, started by the first write and kept until close (a
// goroutine started per transaction would grow its stack again each
// time); a write after close starts them again, to answer it with the
// closed store's error:
//
//   - the writer takes everything appended so far, commits it in one
//     transaction, and hands the outcome to the releaser in commit order,
//     then starts on what was appended meanwhile. A failed transaction is
//     undone in the engine at once (Engine.Abandon), with everything
//     decided on top of it.
//   - the releaser publishes the answers that waited for a transaction, in
//     the order the engine decided them, and only then tells the engine
//     the transaction is durable (Engine.Durable). So while it publishes,
//     a later answer that depends on the transaction is still held and
//     queues behind the earlier ones, never overtaking them.
//
// The writer commits transaction n+1 while the releaser publishes the
// answers of transaction n.
type GroupCommit struct {
	store *Store
	// backend, when store is nil, takes the transactions (a replicated
	// store), each within limits.
	backend Backend
	limits  BackendLimits
	eng     *engine.Engine // set before the engine serves
	log     *slog.Logger
	// maxHeld is how many answers one requester may have waiting for the
	// disk; hold blocks its transport goroutine beyond that.
	maxHeld int
	observe func(CommitEvent) // Options.OnCommit, may be nil

	mu      sync.Mutex
	queue   []queuedChange // appended, not yet taken by the writer
	spare   []queuedChange // the writer's last batch, reused for the next queue
	writing bool           // the writer goroutine runs
	closed  bool           // close was called: the goroutines end when idle
	work    *sync.Cond     // the writer waits for entries
	// Outcomes the writer handed over, in commit order, and whether the
	// releaser goroutine runs.
	outcomes  []commitOutcome
	releasing bool
	toRelease *sync.Cond // the releaser waits for outcomes
	// released: every number up to it is settled, and draining is false
	// once the answers held for it have been published.
	released uint64
	draining bool
	failed   []seqSpan // abandoned numbers (rare; kept for Wait)
	settled  *sync.Cond
	held     []heldAnswer // answers waiting, in the order they were held
	perOwner map[string]int
	room     *sync.Cond
	idle     *sync.Cond // the writer or the releaser stopped
	stats    Stats
	// hook, set by tests, runs before each transaction: it may block, and
	// an error fails the transaction as a failed commit would.
	hook func() error
	// lostLogged: the data file's loss has been logged (writer only).
	lostLogged bool
	// failedRun counts the transactions failed since the last success
	// (writer only): only the first is logged.
	failedRun int
	// pending is the size (changeSize) of the changes appended and not
	// yet committed or failed; WaitRoom waits while it is over
	// maxPending: a bound over all requesters together, which maxHeld
	// (per requester) is not when requesters are many.
	pending, maxPending int64
}

// queuedChange is one change of the engine's write numbered seq.
type queuedChange struct {
	seq uint64
	engine.Change
}

// commitOutcome is one transaction's result: numbers up to hi settled,
// abandoned from failedFrom on when it is not 0.
type commitOutcome struct {
	hi         uint64
	failedFrom uint64
}

type seqSpan struct{ lo, hi uint64 }

// heldAnswer is an answer that may be published once wait is settled;
// release gets nil, or errAbandoned when the change it depends on was
// undone.
type heldAnswer struct {
	wait    uint64
	owner   string
	release func(error)
}

// errAbandoned settles a number whose transaction failed.
var errAbandoned = errors.New("server: change not made durable (transaction failed)")

// CommitEvent is one commit of the durable store (a write-ahead log record,
// or with DirectCommits a bbolt transaction, holding the changes of every
// write that came while the one before was on disk, and its syncs), as
// Options.OnCommit is told of it.
type CommitEvent struct {
	Duration time.Duration // from the start of the commit until it was durable (or failed)
	Changes  int           // key changes it carried (records put or deleted)
	Writes   int           // engine writes they came from (requests, imports, expiry sweeps)
	Err      error         // nil when it is durable
}

// Stats are running totals of the data file's group commits.
type Stats struct {
	Commits    int64         // transactions committed
	Failures   int64         // transactions that failed (their writes were answered with the persistence error)
	Writes     int64         // engine writes committed
	Changes    int64         // records put or deleted by committed transactions
	CommitTime time.Duration // summed Duration of all transactions, failed ones included
	MaxCommit  time.Duration // the longest transaction
}

// SetHook makes hook run before each transaction (fault injection in
// tests): it may block, and its error fails the transaction as a failed
// commit would.
func (c *GroupCommit) SetHook(hook func() error) {
	c.mu.Lock()
	c.hook = hook
	c.mu.Unlock()
}

// SetEngine names the engine the group commit reports to (Durable,
// Abandon); it is called once, before the engine serves.
func (c *GroupCommit) SetEngine(eng *engine.Engine) { c.eng = eng }

// NewGroupCommit returns the group commit of store: the engine's journal
// (engine.Journal). log (nil: slog.Default()) gets failed commits; maxHeld
// (at least one) bounds how many answers one requester may have waiting
// for the disk; observe, if not nil, is told of every commit.
func NewGroupCommit(store *Store, log *slog.Logger, maxHeld int, observe func(CommitEvent)) *GroupCommit {
	if log == nil {
		log = slog.Default()
	}
	c := &GroupCommit{store: store, log: log, maxHeld: max(maxHeld, 1), maxPending: DefaultMaxPending, observe: observe, perOwner: map[string]int{}}
	c.settled = sync.NewCond(&c.mu)
	c.room = sync.NewCond(&c.mu)
	c.idle = sync.NewCond(&c.mu)
	c.work = sync.NewCond(&c.mu)
	c.toRelease = sync.NewCond(&c.mu)
	return c
}

// Backend is a durable store other than a data file that a GroupCommit
// writes its transactions to: a replicated store such as etcd.
type Backend interface {
	// Commit makes changes durable, all together or not at all when
	// they fit one of its transactions; an error undoes them in the
	// engine (Engine.Abandon), their requests answered with the
	// persistence error. A Backend whose requests are bounded (etcd's
	// size and operation limits) may cut changes that do not fit one
	// transaction, inside one engine write too, into several in order:
	// then an error may leave the earlier ones durable.
	Commit(changes []engine.Change) error
}

// BackendLimits bound what the group commit hands a Backend's Commit at
// once: at most MaxChanges changes and MaxBytes bytes of keys and values
// (0: no bound), cut between engine writes. The changes of one engine
// write always go into one Commit, whatever their size; a Backend whose
// requests are bounded cuts them further itself (Backend.Commit).
type BackendLimits struct {
	MaxChanges int
	MaxBytes   int
}

// NewBackendCommit returns a group commit over backend, with one
// transaction at a time, each within limits; the other arguments are
// NewGroupCommit's.
func NewBackendCommit(backend Backend, limits BackendLimits, log *slog.Logger, maxHeld int, observe func(CommitEvent)) *GroupCommit {
	c := NewGroupCommit(nil, log, maxHeld, observe)
	c.backend, c.limits = backend, limits
	return c
}

// cut is how many changes of batch, from the start, the next transaction
// takes: all of them, or fewer within c.limits, ending with a whole
// engine write.
func (c *GroupCommit) cut(batch []queuedChange) int {
	if c.backend == nil || (c.limits.MaxChanges <= 0 && c.limits.MaxBytes <= 0) {
		return len(batch)
	}
	bytes, end := 0, 0 // end: where the last whole write within the limits ends
	for i := range batch {
		q := &batch[i]
		bytes += len(q.Key) + len(q.Value) + len(q.Watch)
		if c.limits.MaxChanges > 0 && i+1 > c.limits.MaxChanges || c.limits.MaxBytes > 0 && bytes > c.limits.MaxBytes {
			break
		}
		if i+1 == len(batch) || batch[i+1].seq != q.seq {
			end = i + 1
		}
	}
	if end > 0 {
		return end
	}
	// The first write alone is over the limits: it goes alone (the
	// Backend cuts it into transactions it can send).
	end = 1
	for end < len(batch) && batch[end].seq == batch[0].seq {
		end++
	}
	return end
}

// DefaultMaxPending bounds the bytes of changes waiting for the disk
// (changeSize) past which kept writes wait before they are decided
// (GroupCommit.WaitRoom).
const DefaultMaxPending = 64 << 20

// changeSize is what a change weighs in GroupCommit.pending.
func changeSize(q *queuedChange) int64 {
	return int64(len(q.Key) + len(q.Value) + len(q.Watch) + 64)
}

// Append queues one write's changes (engine.Journal); it runs under the
// engine's lock and never waits for the disk.
func (c *GroupCommit) Append(seq uint64, changes []engine.Change) {
	c.mu.Lock()
	for _, ch := range changes {
		c.queue = append(c.queue, queuedChange{seq, ch})
		c.pending += changeSize(&c.queue[len(c.queue)-1])
	}
	start := !c.writing
	c.writing = true
	c.work.Signal()
	c.mu.Unlock()
	if start {
		go c.write()
	}
}

// Wait blocks until seq is settled (engine.Journal).
func (c *GroupCommit) Wait(seq uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.released < seq {
		c.settled.Wait()
	}
	return c.outcome(seq)
}

// outcome is the result of a settled number. Under mu.
func (c *GroupCommit) outcome(seq uint64) error {
	for i := len(c.failed) - 1; i >= 0; i-- { // the recent ones are asked for
		if f := c.failed[i]; seq >= f.lo && seq <= f.hi {
			return errAbandoned
		}
	}
	return nil
}

// fail records abandoned numbers. A span that follows the last one
// directly (a disk that keeps failing) extends it, so the list grows
// only when commits fail and succeed in turn. Under mu.
func (c *GroupCommit) fail(s seqSpan) {
	if n := len(c.failed); n > 0 && c.failed[n-1].hi+1 == s.lo {
		c.failed[n-1].hi = s.hi
		return
	}
	c.failed = append(c.failed, s)
}

// WaitRoom returns once the changes waiting for the disk weigh no more
// than DefaultMaxPending: a transport calls it before a write that will
// be kept is decided, so that however many requesters there are, what
// waits for a slow disk stays bounded (their transports stop reading
// meanwhile). Writes that keep nothing never call it.
func (c *GroupCommit) WaitRoom() {
	c.mu.Lock()
	for c.pending > c.maxPending {
		c.room.Wait()
	}
	c.mu.Unlock()
}

// Hold calls release once wait is settled, after every answer held
// earlier for a number up to wait has been released: directly when that
// is already so, else from the releaser. It blocks while owner has
// maxHeld answers held (the transport then stops reading that client).
func (c *GroupCommit) Hold(owner string, wait uint64, release func(error)) {
	c.mu.Lock()
	for {
		if wait <= c.released && !c.draining {
			err := c.outcome(wait)
			c.mu.Unlock()
			release(err)
			return
		}
		if c.perOwner[owner] < c.maxHeld {
			break
		}
		c.room.Wait()
	}
	c.perOwner[owner]++
	c.held = append(c.held, heldAnswer{wait: wait, owner: owner, release: release})
	c.mu.Unlock()
}

// write is the writer goroutine: one transaction per round, for
// everything appended since the last one.
func (c *GroupCommit) write() {
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.closed {
			c.work.Wait()
		}
		if len(c.queue) == 0 {
			c.writing = false
			c.idle.Broadcast()
			c.mu.Unlock()
			return
		}
		batch := c.queue
		if n := c.cut(batch); n < len(batch) {
			c.queue = append([]queuedChange(nil), batch[n:]...)
			batch = batch[:n]
		} else {
			c.queue, c.spare = c.spare[:0], nil
		}
		hook := c.hook
		c.mu.Unlock()

		writes := 0
		var size int64
		for i := range batch {
			if i == 0 || batch[i].seq != batch[i-1].seq {
				writes++
			}
			size += changeSize(&batch[i])
		}
		start := time.Now()
		var err error
		if hook != nil {
			err = hook()
		}
		if err == nil {
			if c.backend != nil {
				err = c.backend.Commit(changesOf(batch))
			} else {
				err = c.store.applyQueued(batch)
			}
		}
		took := time.Since(start)
		lo, hi := batch[0].seq, batch[len(batch)-1].seq
		out := commitOutcome{hi: hi}
		var lost *fileLostError
		switch {
		case err == nil:
			if c.failedRun > 0 {
				c.log.Info("state store changes persisted again", "failed_transactions", c.failedRun)
				c.failedRun = 0
			}
		case !errors.As(err, &lost):
			// Once per run of failures (a full disk fails every one):
			// the next success says how many there were.
			if c.failedRun++; c.failedRun == 1 {
				c.log.Error("state store changes not persisted; their requests are answered with the persistence error (logged once until a commit succeeds)",
					"writes", writes, "records", len(batch), "err", err)
			}
		case !c.lostLogged:
			// Once: every later kept write fails the same way, and is
			// counted in the totals.
			c.lostLogged = true
			c.log.Error("data file replaced, deleted or changed by another writer; kept writes are answered with the persistence error until the server is restarted",
				"file", lost.path, "writes", writes, "records", len(batch), "err", err)
		}
		if err != nil {
			// Undone before anything else is decided on top of them;
			// whatever was decided on top meanwhile is undone too and
			// must not reach the disk.
			out.hi, out.failedFrom = c.eng.Abandon(lo), lo
		}
		clear(batch) // drop the references to the changes' values
		if c.observe != nil {
			// Before the answers go out: whoever got one can read the
			// commit's event.
			c.observe(CommitEvent{Duration: took, Changes: len(batch), Writes: writes, Err: err})
		}
		c.mu.Lock()
		c.record(writes, len(batch), took, err)
		c.pending -= size
		if err != nil {
			c.queue = slices.DeleteFunc(c.queue, func(q queuedChange) bool {
				if q.seq <= out.hi {
					c.pending -= changeSize(&q)
					return true
				}
				return false
			})
		}
		c.room.Broadcast()
		c.spare = batch[:0]
		c.outcomes = append(c.outcomes, out)
		startRelease := !c.releasing
		c.releasing = true
		c.toRelease.Signal()
		c.mu.Unlock()
		if startRelease {
			go c.release()
		}
	}
}

// changesOf is batch's changes, for a Backend.
func changesOf(batch []queuedChange) []engine.Change {
	out := make([]engine.Change, len(batch))
	for i := range batch {
		out[i] = batch[i].Change
	}
	return out
}

// record adds one transaction to the totals. Under mu.
func (c *GroupCommit) record(writes, changes int, took time.Duration, err error) {
	st := &c.stats
	if err != nil {
		st.Failures++
	} else {
		st.Commits++
		st.Writes += int64(writes)
		st.Changes += int64(changes)
	}
	st.CommitTime += took
	st.MaxCommit = max(st.MaxCommit, took)
}

// release is the releaser goroutine: for each transaction's outcome, in
// order, it settles its numbers, publishes every answer held for them
// (including those held while it publishes), and then lets the engine
// stop holding answers for them.
func (c *GroupCommit) release() {
	c.mu.Lock()
	for {
		for len(c.outcomes) == 0 && !c.closed {
			c.toRelease.Wait()
		}
		if len(c.outcomes) == 0 {
			break
		}
		out := c.outcomes[0]
		c.outcomes = c.outcomes[1:]
		if len(c.outcomes) == 0 {
			c.outcomes = nil
		}
		c.released = out.hi
		if out.failedFrom != 0 {
			c.fail(seqSpan{out.failedFrom, out.hi})
		}
		c.draining = true
		c.settled.Broadcast()
		for {
			var due []heldAnswer
			var errs []error
			c.held = slices.DeleteFunc(c.held, func(h heldAnswer) bool {
				if h.wait > c.released {
					return false
				}
				due, errs = append(due, h), append(errs, c.outcome(h.wait))
				return true
			})
			if len(due) == 0 {
				break
			}
			c.mu.Unlock()
			for i, h := range due {
				h.release(errs[i])
			}
			c.mu.Lock()
			for _, h := range due {
				if c.perOwner[h.owner]--; c.perOwner[h.owner] == 0 {
					delete(c.perOwner, h.owner)
				}
			}
			c.room.Broadcast()
		}
		c.draining = false
		if out.failedFrom == 0 {
			c.mu.Unlock()
			c.eng.Durable(out.hi)
			c.mu.Lock()
		}
	}
	c.releasing = false
	c.idle.Broadcast()
	c.mu.Unlock()
}

// Close waits until everything appended has been committed (or failed)
// and every held answer released, and ends the goroutines. Writes
// appended later still work: each starts them again, until they are idle.
func (c *GroupCommit) Close() {
	if c.eng == nil {
		return // never served: nothing was appended
	}
	c.mu.Lock()
	c.closed = true
	c.work.Broadcast()
	c.toRelease.Broadcast()
	for c.writing || c.releasing {
		c.idle.Wait()
	}
	c.mu.Unlock()
}

// Totals returns the running totals.
func (c *GroupCommit) Totals() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
