package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Transaction bounds: etcd refuses a transaction of more than 128
// operations (--max-txn-ops) or a request over 1.5 MiB
// (--max-request-bytes) by default. One operation of each transaction
// is the clock's.
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

	mu        sync.Mutex // one transaction at a time
	eng       *engine.Engine
	lastClock string

	lostOnce sync.Once
	lost     chan struct{} // closed when a transaction failed
	lostErr  error
}

func newLeader(cli *clientv3.Client, prefix, key string, rev int64, timeout time.Duration, st *state) *Leader {
	return &Leader{cli: cli, prefix: prefix, key: key, rev: rev, timeout: timeout, st: st, lost: make(chan struct{})}
}

// Lost is closed once a transaction failed: the leader must step down.
func (l *Leader) Lost() <-chan struct{} { return l.lost }

func (l *Leader) lose(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		close(l.lost)
	})
}

// Limits are the bounds of one transaction (persist.BackendLimits).
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
	for len(dels) > 0 {
		n := min(len(dels), MaxTxnOps)
		if err := l.Commit(dels[:n]); err != nil {
			return err
		}
		dels = dels[n:]
	}
	return nil
}

// Commit writes changes in etcd (persist.Backend): in one transaction
// when they fit (MaxTxnOps, and no two touching overlapping keys), else in
// several in order. Every transaction also writes the clock's high-water
// mark and is conditioned on the election key; any failure makes the
// leader step down (Lost), since etcd may or may not hold what failed.
func (l *Leader) Commit(changes []engine.Change) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.lost:
		return l.lostErr
	default:
	}
	for i := range changes {
		if c := &changes[i]; len(c.Key)+len(c.Value)+len(c.Watch) > maxRequest {
			// Refused before anything is sent: etcd is unchanged, so the
			// leader stays (a client must not be able to cause failovers).
			return ErrTooLarge
		}
	}
	for _, seg := range l.segments(changes) {
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
	return nil
}

// segments turns changes into etcd operations, in transactions that etcd
// accepts: at most MaxTxnOps each, no key written twice (the later change
// of a key replaces the earlier), no registration written after its
// client's registrations were all deleted in the same transaction.
func (l *Leader) segments(changes []engine.Change) [][]clientv3.Op {
	var segs [][]clientv3.Op
	var ops []clientv3.Op
	at := map[string]int{}      // etcd key -> index in ops
	dropped := map[string]int{} // client prefix -> index of its range delete
	flush := func() {
		if len(ops) > 0 {
			segs = append(segs, ops)
		}
		ops, at, dropped = nil, map[string]int{}, map[string]int{}
	}
	put := func(key string, op clientv3.Op) {
		if i, ok := at[key]; ok {
			ops[i] = op
			return
		}
		if len(ops) == MaxTxnOps {
			flush()
		}
		at[key] = len(ops)
		ops = append(ops, op)
	}
	for i := range changes {
		c := &changes[i]
		switch {
		case c.Watch != "" && c.Key == "" && c.Delete:
			cp := l.prefix + watchClient(c.Watch)
			if _, ok := dropped[cp]; ok {
				continue // already dropped in this transaction
			}
			// Earlier registrations of the client in this transaction
			// are covered by the range delete: drop them.
			kept := ops[:0]
			for _, op := range ops {
				if op.IsPut() && strings.HasPrefix(string(op.KeyBytes()), cp) || op.IsDelete() && !isRange(op) && strings.HasPrefix(string(op.KeyBytes()), cp) {
					continue
				}
				kept = append(kept, op)
			}
			ops = kept
			at = map[string]int{}
			for j, op := range ops {
				if !isRange(op) {
					at[string(op.KeyBytes())] = j
				}
			}
			if len(ops) == MaxTxnOps {
				flush()
			}
			dropped[cp] = len(ops)
			ops = append(ops, clientv3.OpDelete(cp, clientv3.WithPrefix()))
		case c.Watch != "":
			key := l.prefix + watchKey(c.Watch, c.Key)
			if _, ok := dropped[l.prefix+watchClient(c.Watch)]; ok {
				flush()
			}
			if c.Delete {
				put(key, clientv3.OpDelete(key))
			} else {
				put(key, clientv3.OpPut(key, ""))
			}
		default:
			key := l.prefix + keysDir + c.Key
			if c.Delete {
				put(key, clientv3.OpDelete(key))
			} else {
				put(key, clientv3.OpPut(key, string(encodeRecord(&c.Record))))
			}
		}
	}
	flush()
	return segs
}

func isRange(op clientv3.Op) bool { return len(op.RangeBytes()) > 0 }

// compact compacts etcd's history at rev.
func (l *Leader) compact(rev int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	_, err := l.cli.Compact(ctx, rev)
	return err
}
