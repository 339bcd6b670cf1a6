package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Transaction bounds: etcd refuses a transaction of more than 128
// operations (--max-txn-ops) or a request over 1.5 MiB
// (--max-request-bytes) by default, and its client refuses to send a
// request over 2 MiB (ClientSendBytes). One operation of each transaction
// is the clock's. Every transaction the leader sends is cut to fit them
// (segments), counting the bytes of keys, values and the condition.
const (
	MaxTxnOps   = 127
	MaxTxnBytes = 1 << 20
	// MaxValueBytes is the longest value a state store on etcd keeps
	// (Limits.MaxValueBytes is lowered to it): a record must fit one
	// etcd request with room to spare.
	MaxValueBytes = MaxTxnBytes - 64<<10
	// MaxKeyBytes is the longest key a state store on etcd takes
	// (Limits.MaxKeyBytes is lowered to it).
	MaxKeyBytes = 32 << 10
	// maxRequest is what one transaction may carry at most: etcd's
	// default --max-request-bytes (1.5 MiB) less room for the envelope.
	maxRequest = 3<<19 - 16<<10
	// ClientSendBytes is the etcd client's send limit, set explicitly
	// (it is the client's default): above maxRequest.
	ClientSendBytes = 2 << 20
	// ClientRecvBytes is the etcd client's receive limit, set explicitly
	// (the client's default): a page of a read (loadPage keys of at most
	// MaxKeyBytes and a record of MaxValueBytes each) fits it.
	ClientRecvBytes = math.MaxInt32
	// opOverhead bounds the protobuf framing one operation adds to a
	// transaction request (tags and lengths of the operation, its key,
	// its range end and its value).
	opOverhead = 32
	// maxClockBytes bounds the clock's value (an HLC's text).
	maxClockBytes = 256
)

// ErrTooLarge is a change too large for one etcd request; nothing of its
// transaction was sent.
var ErrTooLarge = errors.New("etcdstore: change too large for one etcd request")

// ErrNotLeader is a transaction refused because its writer is no longer
// the leader (its election key is gone or was replaced).
var ErrNotLeader = errors.New("etcdstore: no longer the leader")

// Leader is the durable side of the leader's engine (server.Replica): it
// writes the engine's changes into etcd, each transaction conditioned on
// the leader's election key, and loads the engine from the state the
// standby followed.
type Leader struct {
	cli     *clientv3.Client
	prefix  string
	key     string // the election key
	rev     int64  // its creation revision
	timeout time.Duration
	st      *state // loaded into the engine by Load, then dropped
	lim     txnLimits

	mu        sync.Mutex // one transaction at a time
	eng       *engine.Engine
	lastClock string
	vol       volume // under mu

	// compactAt is the revision the volume asks to compact at (0: none
	// pending); compactDue is signalled when it is set.
	compactAt  atomic.Int64
	compactDue chan struct{}

	lostOnce sync.Once
	lost     chan struct{} // closed when a transaction failed
	lostErr  error
}

// newLeader is the leader whose election key is key, created at rev,
// loading st; it asks for a compaction each time compactBytes more bytes
// were written (never when ≤ 0).
func newLeader(cli *clientv3.Client, prefix, key string, rev int64, timeout time.Duration, st *state, compactBytes int64) *Leader {
	return &Leader{
		cli: cli, prefix: prefix, key: key, rev: rev, timeout: timeout, st: st, lim: limitsFor(prefix, key),
		vol:        volume{every: compactBytes, mark: st.rev},
		compactDue: make(chan struct{}, 1),
		lost:       make(chan struct{}),
	}
}

// volume drives compaction by the bytes written: etcd keeps every
// revision until it is compacted, so without it a fast writer fills
// etcd's quota within the time-driven compaction's window whatever the
// store's own size. Each time every more bytes were written it asks to
// compact at the revision where it last did (mark: the previous threshold,
// at first the revision the term began at), so the history etcd keeps
// stays between one and two thresholds of writes, whatever their rate,
// and a standby less than one threshold behind can still follow.
type volume struct {
	every   int64 // the threshold; ≤ 0: never
	written int64 // bytes written since mark
	mark    int64 // the revision of the last threshold
}

// add counts n bytes written up to revision rev; it returns the revision
// to compact at when they pass the threshold.
func (v *volume) add(n int, rev int64) (int64, bool) {
	if v.every <= 0 {
		return 0, false
	}
	v.written += int64(n)
	if v.written < v.every {
		return 0, false
	}
	at := v.mark
	v.mark, v.written = rev, 0
	return at, at > 0
}

// compactDueC is signalled when the bytes written ask for a compaction,
// at the revision takeCompaction returns.
func (l *Leader) compactDueC() <-chan struct{} { return l.compactDue }

// takeCompaction is the revision to compact at, or 0 when none is due.
func (l *Leader) takeCompaction() int64 { return l.compactAt.Swap(0) }

// Lost is closed once a transaction failed: the leader must step down.
func (l *Leader) Lost() <-chan struct{} { return l.lost }

func (l *Leader) lose(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		close(l.lost)
	})
}

// Limits are the bounds of one transaction the group commit aims at
// (persist.BackendLimits); Commit cuts whatever it is given to etcd's.
func (l *Leader) Limits() persist.BackendLimits {
	return persist.BackendLimits{MaxChanges: MaxTxnOps, MaxBytes: MaxTxnBytes}
}

// Load restores eng, which has not served yet, from the followed state:
// its records (moving the clock past every version, fencing token and the
// stored clock) and registrations. Records whose deadline passed are
// deleted from etcd.
func (l *Leader) Load(eng *engine.Engine) error {
	st := l.st
	l.st = nil
	recs := make([]engine.Record, 0, len(st.records))
	for _, r := range st.records {
		recs = append(recs, r)
	}
	expired := eng.Restore(recs, st.clock)
	for w := range st.watches {
		if client, key, ok := parseWatch(w); ok {
			eng.RestoreWatch(client, key)
		}
	}
	l.mu.Lock()
	l.eng = eng
	l.mu.Unlock()
	if len(expired) == 0 {
		return nil
	}
	dels := make([]engine.Change, len(expired))
	for i, k := range expired {
		dels[i] = engine.Change{Record: engine.Record{Key: k}, Delete: true}
	}
	// Commit cuts them into transactions etcd takes (by operations and
	// bytes: 127 deletions of 32 KiB keys are 4 MiB).
	return l.Commit(dels)
}

// Commit writes changes in etcd (persist.Backend): in one transaction
// when they fit (MaxTxnOps operations, maxRequest bytes, and no two
// touching overlapping keys), else in several in order, cut between
// changes, inside one engine write too. Every transaction also writes the
// clock's high-water mark and is conditioned on the election key; any
// failure makes the leader step down (Lost), since etcd may or may not
// hold what failed. Changes cut into several transactions are not atomic
// together: when a later one fails, the earlier ones are in etcd. One
// change is never cut: one that alone does not fit a transaction is
// refused with ErrTooLarge before anything is sent.
func (l *Leader) Commit(changes []engine.Change) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.lost:
		return l.lostErr
	default:
	}
	segs, err := l.segments(changes, l.lim)
	if err != nil {
		return err // nothing sent: the leader stays
	}
	for _, seg := range segs {
		if err := l.txn(seg); err != nil {
			l.lose(err)
			return err
		}
	}
	return nil
}

// tick writes the clock's high-water mark when it moved since the last
// transaction (reads hand out timestamps too).
func (l *Leader) tick() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.eng == nil || l.eng.ClockLast().String() == l.lastClock {
		return nil
	}
	if err := l.txn(nil); err != nil {
		l.lose(err)
		return err
	}
	return nil
}

// txn commits ops and the clock, if the election key is still ours.
// Under mu.
func (l *Leader) txn(ops []clientv3.Op) error {
	if l.eng != nil {
		c := l.eng.ClockLast().String()
		ops = append(ops, clientv3.OpPut(l.prefix+clockKey, c))
		l.lastClock = c
	}
	if len(ops) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)).
		Then(ops...).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdstore: transaction: %w", err)
	}
	if !resp.Succeeded {
		return ErrNotLeader
	}
	n := 0
	for _, op := range ops {
		n += opSize(op)
	}
	if at, ok := l.vol.add(n, resp.Header.Revision); ok {
		l.compactAt.Store(at)
		select {
		case l.compactDue <- struct{}{}:
		default: // one is pending: it will take the newer revision
		}
	}
	return nil
}

// txnLimits bound one transaction's operations: at most ops of them
// and bytes of their keys, range ends and values (each counted with
// opOverhead), the clock's operation and the leader condition excluded.
type txnLimits struct{ ops, bytes int }

// opSize is what op adds to a transaction request, at most.
func opSize(op clientv3.Op) int {
	return len(op.KeyBytes()) + len(op.RangeBytes()) + len(op.ValueBytes()) + opOverhead
}

// limitsFor are the bounds of the transactions of the leader whose
// election key is key under prefix: MaxTxnOps operations, and the request
// (operations, the clock's, the condition) within maxRequest bytes.
func limitsFor(prefix, key string) txnLimits {
	fixed := len(key) + opOverhead + // the condition on the election key
		len(prefix) + len(clockKey) + maxClockBytes + opOverhead // the clock's put
	return txnLimits{ops: MaxTxnOps, bytes: maxRequest - fixed}
}

// op is c's etcd operation and the key it is known by in a transaction
// (empty for a client's range delete).
func (l *Leader) op(c *engine.Change) (clientv3.Op, string) {
	switch {
	case c.Watch != "" && c.Key == "" && c.Delete:
		return clientv3.OpDelete(l.prefix+watchClient(c.Watch), clientv3.WithPrefix()), ""
	case c.Watch != "":
		key := l.prefix + watchKey(c.Watch, c.Key)
		if c.Delete {
			return clientv3.OpDelete(key), key
		}
		return clientv3.OpPut(key, ""), key
	default:
		key := l.prefix + keysDir + c.Key
		if c.Delete {
			return clientv3.OpDelete(key), key
		}
		return clientv3.OpPut(key, string(encodeRecord(&c.Record))), key
	}
}

// segments turns changes into etcd operations, in transactions that etcd
// and the client accept: at most lim.ops operations and lim.bytes bytes
// each, no key written twice (the later change of a key replaces the
// earlier when it fits in its place, else it goes into the next
// transaction), no registration written after its client's registrations
// were all deleted in the same transaction. Changes are cut wherever a
// bound is reached, inside an engine write too (an expiry of many keys, an
// import). It fails with ErrTooLarge, before anything is sent, when one
// change alone does not fit a transaction.
func (l *Leader) segments(changes []engine.Change, lim txnLimits) ([][]clientv3.Op, error) {
	type item struct {
		op   clientv3.Op
		key  string // "" for a client's range delete
		size int
	}
	items := make([]item, len(changes))
	for i := range changes {
		op, key := l.op(&changes[i])
		items[i] = item{op, key, opSize(op)}
		if items[i].size > lim.bytes {
			// Refused before anything is sent: etcd is unchanged, so the
			// leader stays (a client must not be able to cause failovers).
			return nil, ErrTooLarge
		}
	}
	var segs [][]clientv3.Op
	var ops []clientv3.Op
	size := 0
	at := map[string]int{}      // etcd key -> index in ops
	dropped := map[string]int{} // client prefix -> index of its range delete
	flush := func() {
		if len(ops) > 0 {
			segs = append(segs, ops)
		}
		ops, size, at, dropped = nil, 0, map[string]int{}, map[string]int{}
	}
	// add appends op, first ending the transaction when op does not fit.
	add := func(op clientv3.Op, n int) {
		if len(ops) == lim.ops || size+n > lim.bytes {
			flush()
		}
		ops = append(ops, op)
		size += n
	}
	for i := range changes {
		c, it := &changes[i], &items[i]
		switch {
		case it.key == "": // a client's registrations all deleted
			cp := string(it.op.KeyBytes())
			if _, ok := dropped[cp]; ok {
				continue // already dropped in this transaction
			}
			// Earlier registrations of the client in this transaction
			// are covered by the range delete: drop them.
			kept := ops[:0]
			size = 0
			for _, op := range ops {
				if !isRange(op) && strings.HasPrefix(string(op.KeyBytes()), cp) {
					continue
				}
				kept = append(kept, op)
				size += opSize(op)
			}
			ops = kept
			add(it.op, it.size)
			at = map[string]int{}
			for j, op := range ops {
				if !isRange(op) {
					at[string(op.KeyBytes())] = j
				}
			}
			dropped[cp] = len(ops) - 1
		default:
			if c.Watch != "" {
				if _, ok := dropped[l.prefix+watchClient(c.Watch)]; ok {
					flush()
				}
			}
			if j, ok := at[it.key]; ok {
				if d := it.size - opSize(ops[j]); size+d <= lim.bytes {
					ops[j] = it.op
					size += d
					continue
				}
				// The later change does not fit in the earlier one's
				// place: it goes into the next transaction.
				flush()
			}
			add(it.op, it.size)
			at[it.key] = len(ops) - 1
		}
	}
	flush()
	return segs, nil
}

func isRange(op clientv3.Op) bool { return len(op.RangeBytes()) > 0 }

// compact compacts etcd's history at rev.
func (l *Leader) compact(rev int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	_, err := l.cli.Compact(ctx, rev)
	return err
}
