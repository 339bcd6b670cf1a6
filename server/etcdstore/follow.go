package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressEvery is how often a catching-up standby asks its watch for
// progress.
const progressEvery = 50 * time.Millisecond

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

// load reads the whole prefix at one revision, page by page.
func load(ctx context.Context, cli *clientv3.Client, prefix string) (*state, error) {
	st := newState()
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(loadPage)}
		if st.rev != 0 {
			opts = append(opts, clientv3.WithRev(st.rev))
		}
		resp, err := cli.Get(ctx, from, opts...)
		if err != nil {
			return nil, err
		}
		if st.rev == 0 {
			st.rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			st.apply(prefix, kv.Key, kv.Value, false)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return st, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// run loads the prefix and follows it until ctx ends. A watch that
// cannot resume (history compacted past it) reloads.
func (f *follower) run(ctx context.Context) {
	defer close(f.done)
	for ctx.Err() == nil {
		st, err := load(ctx, f.cli, f.prefix)
		if err != nil {
			f.fail(err)
			return
		}
		f.log.Debug("standby loaded the store", "revision", st.rev, "keys", len(st.records), "watches", len(st.watches))
		f.mu.Lock()
		f.st = st
		rev := st.rev
		f.progress.Broadcast()
		f.mu.Unlock()
		if st.bad > 0 {
			f.log.Warn("malformed records in etcd skipped", "prefix", f.prefix, "records", st.bad)
		}
		err = f.watch(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, errCompacted) {
			f.fail(err)
			return
		}
		f.log.Info("etcd history compacted past the standby's revision; reloading", "revision", rev)
	}
}

var errCompacted = errors.New("etcdstore: watch revision compacted")

// watch applies the prefix's changes after rev until ctx ends or the
// watch fails.
func (f *follower) watch(ctx context.Context, rev int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := f.cli.Watch(wctx, f.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithProgressNotify())
	for resp := range ch {
		if resp.CompactRevision != 0 {
			return errCompacted
		}
		if err := resp.Err(); err != nil {
			return err
		}
		f.mu.Lock()
		for _, ev := range resp.Events {
			f.st.apply(f.prefix, ev.Kv.Key, ev.Kv.Value, ev.Type == clientv3.EventTypeDelete)
		}
		if resp.Header.Revision > f.st.rev {
			f.st.rev = resp.Header.Revision
		}
		f.progress.Broadcast()
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

// catchUp waits until the state reflects etcd's revision now (a
// linearizable read), asking the watch for progress, and returns it; the
// follower must be stopped (its context cancelled) before the state is
// used by anyone else.
func (f *follower) catchUp(ctx context.Context) (*state, error) {
	resp, err := f.cli.Get(ctx, f.prefix+clockKey)
	if err != nil {
		return nil, err
	}
	target := resp.Header.Revision
	done := make(chan struct{})
	defer close(done)
	go func() {
		// Ask the watch for a progress notification now and then (it is
		// ignored while the watch still catches up), and wake the wait
		// below when ctx ends.
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			_ = f.cli.RequestProgress(clientv3.WithRequireLeader(ctx))
			select {
			case <-ctx.Done():
				f.fail(ctx.Err())
				return
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.err == nil && (f.st == nil || f.st.rev < target) {
		f.progress.Wait()
	}
	if f.err != nil {
		return nil, fmt.Errorf("etcdstore: catching up: %w", f.err)
	}
	return f.st, nil
}
