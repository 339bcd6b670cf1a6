package migrate

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// errChanged is a key that kept changing under the migrator.
var errChanged = errors.New("changed by another writer on every attempt")

// runner is one Apply's state.
type runner struct {
	c    *runtime.Client
	opts Options
	bw   *bufio.Writer // used by one goroutine at a time (see page)
	bmu  sync.Mutex
	pace *pacer
}

// item is a key of a page and what was read of it.
type item struct {
	key, old, cur []byte
	ver           hlc.HLC
	lock          []byte // the guard lock; nil when unguarded
	err           error  // the GET's error
	read          bool   // the GET was sent
}

// page migrates one listing page (see the package doc for the steps).
// It returns only errors that stop the run (the backup failing); a key's
// failure is counted in st.
func (r *runner) page(ctx context.Context, d Decl, keys [][]byte, st *pageStats) error {
	items := make([]item, 0, len(keys))
	for _, k := range keys {
		if !bytes.HasPrefix(k, []byte(Prefix)) {
			items = append(items, item{key: k})
		}
	}
	wctx := context.WithoutCancel(ctx) // keys in flight finish after a cancel

	// 1. Read the page: Workers GETs in flight, paced; after a cancel the
	// keys not yet read are left for the resumed run.
	r.each(len(items), func(i int) bool {
		if r.pace.wait(ctx) != nil {
			return false
		}
		it := &items[i]
		it.old, it.ver, it.err = r.c.Get(wctx, it.key)
		it.read = true
		return true
	})

	// 2. Keep the keys that need a rewrite.
	todo := items[:0]
	for _, it := range items {
		switch {
		case !it.read:
			continue // not read before a cancel: the resumed run reads it
		case errors.Is(it.err, runtime.ErrNotFound):
			st.done.Add(1) // deleted since it was listed
			continue
		case it.err != nil:
			st.done.Add(1)
			st.fail(d, it.key, it.err)
			continue
		}
		cur, err := d.Codec.Current(it.old)
		switch {
		case err != nil:
			st.done.Add(1)
			st.fail(d, it.key, err)
			continue
		case bytes.Equal(cur, it.old):
			st.done.Add(1)
			continue
		}
		it.cur = cur
		if d.Guard != nil {
			if lock, ok := d.Guard(it.key); ok {
				it.lock = lock
			}
		}
		todo = append(todo, it)
	}
	var plain, guarded []item
	for _, it := range todo {
		if it.lock != nil {
			guarded = append(guarded, it)
		} else {
			plain = append(plain, it)
		}
	}

	// 3. The unguarded keys' backup lines, flushed once before any is
	// touched (a guarded key's line is written under its lease).
	for _, it := range plain {
		if err := r.line(before(it), false); err != nil {
			return err
		}
	}
	if err := r.flush(); err != nil {
		return err
	}

	// 4. Rewrite: unguarded keys Workers at a time, then guarded keys
	// under their leases.
	var fatal error
	var fmu sync.Mutex
	r.each(len(plain), func(i int) bool {
		it := plain[i]
		changed, err := r.rewrite(wctx, d, it)
		st.done.Add(1)
		switch {
		case errors.Is(err, errBackup):
			fmu.Lock()
			fatal = cmp.Or(fatal, err)
			fmu.Unlock()
		case err != nil:
			st.fail(d, it.key, err)
		case changed:
			st.rewritten.Add(1)
		}
		return true
	})
	if fatal != nil {
		return fatal
	}
	if err := r.guarded(ctx, d, guarded, st); err != nil {
		return err
	}
	return r.flush() // the page's written lines
}

// each runs f(0..n-1) on at most Workers goroutines, in order of i, and
// stops starting new ones once an f returns false.
func (r *runner) each(n int, f func(i int) bool) {
	if n == 0 {
		return
	}
	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	workers := min(r.opts.Workers, n)
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for !stopped.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if !f(i) {
					stopped.Store(true)
				}
			}
		}()
	}
	wg.Wait()
}

// errBackup wraps a failure to write the backup: it stops the run.
var errBackup = errors.New("migrate: writing the backup")

// swapResult is what swap did.
type swapResult int

const (
	swapped     swapResult = iota // the key holds to
	swapChanged                   // the key did not hold from: nothing done
	swapGone                      // the key was absent: nothing done
	swapLost                      // a writer wrote between VDEL and SET NX: its value stays
)

// swap replaces key's value from with to, as near to a compare-and-set as
// the protocol comes: VDEL if the key still holds from, then SET NX. SET
// NX is sent as soon as VDEL answers, nothing in between: the key is
// absent for one round trip. A DEL or VDEL of another client in that
// window finds nothing (answers 0) and the key comes back with to; the
// protocol has no compare-and-set to close it (docs/runtime.md). ver is
// the version SET NX gave the key.
func swap(ctx context.Context, c *runtime.Client, key, from, to []byte) (res swapResult, ver hlc.HLC, err error) {
	deleted, _, err := c.VDel(ctx, key, from, runtime.DelOptions{})
	switch {
	case errors.Is(err, runtime.ErrConditionNotMet):
		return swapChanged, ver, nil
	case err != nil:
		return 0, ver, err
	case !deleted:
		return swapGone, ver, nil
	}
	ver, err = c.Set(ctx, key, to, runtime.SetOptions{Condition: runtime.IfNotExists})
	switch {
	case errors.Is(err, runtime.ErrConditionNotMet):
		return swapLost, ver, nil
	case err != nil:
		return 0, ver, err
	}
	return swapped, ver, nil
}

// rewrite rewrites one unguarded key whose backup line is written (swap
// old for cur); a key changed in between is read again.
func (r *runner) rewrite(ctx context.Context, d Decl, it item) (changed bool, err error) {
	for attempt := 0; ; attempt++ {
		res, ver, err := swap(ctx, r.c, it.key, it.old, it.cur)
		switch {
		case errors.Is(err, runtime.ErrFencingTokenRequired):
			return false, ErrFenced
		case err != nil:
			return false, err
		case res == swapGone:
			return false, nil // deleted by someone else
		case res == swapped:
			return true, r.line(written(it, ver), false)
		}
		// swapChanged, swapLost: changed since read (a writer's value
		// stays): read it again
		if attempt+1 >= r.opts.Retries {
			return false, errChanged
		}
		var done bool
		if it, done, err = r.reread(ctx, d, it.key); done || err != nil {
			return false, err
		}
		if err := r.line(before(it), true); err != nil {
			return false, err
		}
	}
}

// reread reads key again; done reports there is nothing to rewrite (gone,
// or current).
func (r *runner) reread(ctx context.Context, d Decl, key []byte) (it item, done bool, err error) {
	it.key = key
	it.old, it.ver, err = r.c.Get(ctx, key)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return it, true, nil
	case err != nil:
		return it, true, err
	}
	if it.cur, err = d.Codec.Current(it.old); err != nil {
		return it, true, err
	}
	return it, bytes.Equal(it.cur, it.old), nil
}

// guarded rewrites guarded keys, sorted by lock, each under its lock's
// lease (one lease for consecutive keys of the same lock), with a fenced
// SET. It waits for a lock a writer holds, until ctx ends.
func (r *runner) guarded(ctx context.Context, d Decl, items []item, st *pageStats) error {
	if len(items) == 0 {
		return nil
	}
	slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.lock, b.lock) })
	wctx := context.WithoutCancel(ctx)
	var lease *runtime.Lease
	var refused []byte // the lock whose lease could not be had
	var refusal error
	release := func() {}
	defer func() { release() }()
	for _, it := range items {
		if ctx.Err() != nil {
			return nil // cancelled: the resumed run does the rest
		}
		if refused != nil && bytes.Equal(refused, it.lock) {
			st.done.Add(1)
			st.fail(d, it.key, refusal)
			continue
		}
		if lease == nil || lease.Lock().Name() != string(it.lock) {
			release()
			var err error
			lease, release, err = r.acquire(ctx, it.lock)
			if err != nil {
				if ctx.Err() != nil {
					return nil // cancelled while waiting: the resumed run does the rest
				}
				refused, refusal = it.lock, err
				st.done.Add(1)
				st.fail(d, it.key, err)
				continue
			}
		}
		changed, err := r.fencedRewrite(wctx, d, it.key, lease)
		st.done.Add(1)
		switch {
		case errors.Is(err, errBackup):
			return err
		case err != nil:
			st.fail(d, it.key, err)
		case changed:
			st.rewritten.Add(1)
		}
	}
	return nil
}

// fencedRewrite reads key under lease, writes and flushes its backup line
// and sets the current bytes with the lease's fencing token.
func (r *runner) fencedRewrite(ctx context.Context, d Decl, key []byte, lease *runtime.Lease) (bool, error) {
	it, done, err := r.reread(ctx, d, key)
	if done || err != nil {
		return false, err
	}
	if err := lease.Err(); err != nil {
		return false, err
	}
	if err := r.line(before(it), true); err != nil {
		return false, err
	}
	ver, err := r.c.Set(ctx, key, it.cur, runtime.SetOptions{FencingToken: lease.Token()})
	if err != nil {
		return false, err
	}
	return true, r.line(written(it, ver), false)
}

// before is it's backup line written before the key is touched.
func before(it item) BackupLine {
	return BackupLine{Key: it.key, Old: it.old, New: it.cur, Version: it.ver.String(), Step: StepBefore}
}

// written is it's backup line once the migrator's SET gave the key ver.
func written(it item, ver hlc.HLC) BackupLine {
	l := before(it)
	l.Step, l.Written = StepWritten, ver.String()
	return l
}

// acquire waits for the lease of the guard lock name until ctx ends,
// telling Options.GuardWaiting when a writer holds it. The lease outlives
// ctx (keys in flight finish after a cancel) until release.
func (r *runner) acquire(ctx context.Context, name []byte) (*runtime.Lease, func(), error) {
	leaseCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	lock, lctx := runtime.NewLock(r.c, name, r.opts.LockTTL), mergeCancel(leaseCtx, ctx)
	lease, ok, err := lock.TryAcquire(lctx)
	if err == nil && !ok {
		if r.opts.GuardWaiting != nil {
			holder, _, _ := lock.Holder(ctx)
			r.opts.GuardWaiting(name, holder)
		}
		lease, err = lock.Acquire(lctx)
	}
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return lease, func() {
		_ = lease.Release(context.WithoutCancel(ctx))
		stop()
	}, nil
}

// mergeCancel is parent (whose lifetime a lease takes) cut short by
// cancel's cancellation while waiting; once the lease is held only parent
// bounds it.
func mergeCancel(parent, cancel context.Context) context.Context {
	ctx, stop := context.WithCancel(parent)
	go func() {
		select {
		case <-cancel.Done():
			stop()
		case <-ctx.Done():
		}
	}()
	return ctx
}

// line writes one backup line; flush: at once (before the key is touched).
func (r *runner) line(b BackupLine, flush bool) error {
	j, err := json.Marshal(b)
	if err != nil {
		return errors.Join(errBackup, err)
	}
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if _, err := r.bw.Write(append(j, '\n')); err != nil {
		return errors.Join(errBackup, err)
	}
	if flush {
		if err := r.bw.Flush(); err != nil {
			return errors.Join(errBackup, err)
		}
	}
	return nil
}

func (r *runner) flush() error {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if err := r.bw.Flush(); err != nil {
		return errors.Join(errBackup, err)
	}
	return nil
}

// count lists pattern's keys from the listing cursor from ("": all of
// them); -1 when listing fails.
func count(ctx context.Context, c *runtime.Client, pattern string, from runtime.Cursor) int64 {
	var n int64
	for k, err := range c.ListKeys(pattern, runtime.ListOptions{From: from}).All(ctx) {
		if err != nil {
			return -1
		}
		if !bytes.HasPrefix(k, []byte(Prefix)) {
			n++
		}
	}
	return n
}

// pacer spaces keys at most rate per second.
type pacer struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return &pacer{}
	}
	return &pacer{every: time.Duration(float64(time.Second) / rate)}
}

func (p *pacer) wait(ctx context.Context) error {
	if p.every == 0 {
		return ctx.Err()
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(p.every)
	p.mu.Unlock()
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
