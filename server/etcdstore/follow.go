package etcdstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// retryPause is how long a standby waits before it retries a failed load
// or watch.
const retryPause = 200 * time.Millisecond

// loadPage is how many etcd keys one read of a load returns.
const loadPage = 1000

// state is what the prefix holds, as a standby keeps it: every record,
// every registration, the clock, and the revision it reflects.
type state struct {
	records map[string]engine.Record
	watches map[string]struct{} // suffixes after watchesDir
	clock   hlc.HLC
	rev     int64
	bad     int // malformed records skipped
}

func newState() *state {
	return &state{records: map[string]engine.Record{}, watches: map[string]struct{}{}}
}

// apply records one etcd key's new value (del: its deletion).
func (s *state) apply(prefix string, key, value []byte, del bool) {
	k, ok := strings.CutPrefix(string(key), prefix)
	if !ok {
		return
	}
	switch {
	case strings.HasPrefix(k, keysDir):
		name := k[len(keysDir):]
		if del {
			delete(s.records, name)
			return
		}
		r, err := decodeRecord(name, value)
		if err != nil {
			s.bad++
			return
		}
		s.records[name] = r
	case strings.HasPrefix(k, watchesDir):
		if del {
			delete(s.watches, k[len(watchesDir):])
		} else {
			s.watches[k[len(watchesDir):]] = struct{}{}
		}
	case k == clockKey && !del:
		if h, err := hlc.Parse(string(value)); err == nil && h.Compare(s.clock) > 0 {
			s.clock = h
		}
	}
}

// follower keeps a state in step with etcd: loaded at a revision, then
// watched from the next one.
type follower struct {
	cli    *clientv3.Client
	prefix string
	log    *slog.Logger

	mu       sync.Mutex
	st       *state
	progress *sync.Cond    // st.rev moved
	err      error         // the watch ended
	done     chan struct{} // closed when run returns
}

func newFollower(cli *clientv3.Client, prefix string, log *slog.Logger) *follower {
	f := &follower{cli: cli, prefix: prefix, log: log}
	f.progress = sync.NewCond(&f.mu)
	f.done = make(chan struct{})
	return f
}

// pages reads the keys from key (with WithPrefix or WithRange in opts) at
// revision rev (0: etcd's current one) loadPage keys at a time, so that no
// response exceeds the client's receive limit (ClientRecvBytes) however
// large the store, and calls page with each response. It returns the
// revision read.
func pages(ctx context.Context, cli *clientv3.Client, key string, rev int64, page func(*clientv3.GetResponse), opts ...clientv3.OpOption) (int64, error) {
	end := string(clientv3.GetPrefixRangeEnd(key))
	if op := clientv3.OpGet(key, opts...); len(op.RangeBytes()) > 0 {
		end = string(op.RangeBytes())
	}
	from := key
	for {
		o := append(opts[:len(opts):len(opts)], clientv3.WithRange(end), clientv3.WithLimit(loadPage))
		if rev != 0 {
			o = append(o, clientv3.WithRev(rev))
		}
		resp, err := cli.Get(ctx, from, o...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		page(resp)
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// load reads the whole prefix at one revision, page by page.
func load(ctx context.Context, cli *clientv3.Client, prefix string) (*state, error) {
	st := newState()
	rev, err := pages(ctx, cli, prefix, 0, func(resp *clientv3.GetResponse) {
		for _, kv := range resp.Kvs {
			st.apply(prefix, kv.Key, kv.Value, false)
		}
	}, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	st.rev = rev
	return st, nil
}

// run loads the prefix and follows it until ctx ends. A watch that
// ends (etcd lost its leader, a member went away) resumes from the last
// revision applied; one that cannot (history compacted past it) reloads.
func (f *follower) run(ctx context.Context) {
	defer close(f.done)
	var rev int64
	for ctx.Err() == nil {
		if rev == 0 {
			st, err := load(ctx, f.cli, f.prefix)
			if err != nil {
				f.log.Debug("standby could not load the store; retrying", "err", err)
				pause(ctx)
				continue
			}
			f.log.Debug("standby loaded the store", "revision", st.rev, "keys", len(st.records), "watches", len(st.watches))
			if st.bad > 0 {
				f.log.Warn("malformed records in etcd skipped", "prefix", f.prefix, "records", st.bad)
			}
			f.mu.Lock()
			f.st = st
			rev = st.rev
			f.progress.Broadcast()
			f.mu.Unlock()
		}
		err := f.watch(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errCompacted):
			f.log.Info("etcd history compacted past the standby's revision; reloading", "revision", rev)
			rev = 0
		default:
			f.log.Debug("standby watch ended; resuming", "err", err)
			pause(ctx)
		}
	}
}

// pause waits a little before a retry, or until ctx ends.
func pause(ctx context.Context) {
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

var errCompacted = errors.New("etcdstore: watch revision compacted")

// watch applies the prefix's changes after the state's revision until
// ctx ends or the watch fails.
func (f *follower) watch(ctx context.Context) error {
	f.mu.Lock()
	rev := f.st.rev
	f.mu.Unlock()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := f.cli.Watch(wctx, f.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for resp := range ch {
		if resp.CompactRevision != 0 {
			return errCompacted
		}
		if err := resp.Err(); err != nil {
			return err
		}
		f.mu.Lock()
		// The revision applied is the last event's: a response's header
		// revision may be ahead of events not yet delivered (progress
		// notifications of etcd before 3.4.24 and 3.5.8).
		for _, ev := range resp.Events {
			f.st.apply(f.prefix, ev.Kv.Key, ev.Kv.Value, ev.Type == clientv3.EventTypeDelete)
			f.st.rev = max(f.st.rev, ev.Kv.ModRevision)
		}
		f.mu.Unlock()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.New("etcdstore: watch closed")
}

func (f *follower) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.progress.Broadcast()
	f.mu.Unlock()
}

// catchUp brings st, which reflects etcd up to st.rev, to etcd's
// revision now: it reads the keys changed since (their current values),
// and when the counts show deletions, the names of the keys still there.
// It does not depend on the watch: whatever it missed is read here.
func catchUp(ctx context.Context, cli *clientv3.Client, prefix string, st *state) error {
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	now := resp.Header.Revision
	if now > st.rev {
		_, err := pages(ctx, cli, prefix, now, func(changed *clientv3.GetResponse) {
			for _, kv := range changed.Kvs {
				st.apply(prefix, kv.Key, kv.Value, false)
			}
		}, clientv3.WithPrefix(), clientv3.WithMinModRev(st.rev+1))
		if err != nil {
			return err
		}
		for _, dir := range []string{keysDir, watchesDir} {
			have := len(st.records)
			if dir == watchesDir {
				have = len(st.watches)
			}
			count, err := cli.Get(ctx, prefix+dir, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(now))
			if err != nil {
				return err
			}
			if count.Count == int64(have) {
				continue
			}
			there := make(map[string]bool, count.Count)
			_, err = pages(ctx, cli, prefix+dir, now, func(names *clientv3.GetResponse) {
				for _, kv := range names.Kvs {
					there[string(kv.Key)[len(prefix)+len(dir):]] = true
				}
			}, clientv3.WithPrefix(), clientv3.WithKeysOnly())
			if err != nil {
				return err
			}
			if dir == keysDir {
				for k := range st.records {
					if !there[k] {
						delete(st.records, k)
					}
				}
			} else {
				for w := range st.watches {
					if !there[w] {
						delete(st.watches, w)
					}
				}
			}
		}
		st.rev = now
	}
	return nil
}

// state waits until the follower has loaded the store once and returns
// its state; the follower must be stopped (its context cancelled and done
// closed) before the state is used, which it does not check.
func (f *follower) state(ctx context.Context) (*state, error) {
	stop := context.AfterFunc(ctx, func() { f.fail(ctx.Err()) })
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.err == nil && f.st == nil {
		f.progress.Wait()
	}
	if f.st == nil {
		return nil, f.err
	}
	return f.st, nil
}
