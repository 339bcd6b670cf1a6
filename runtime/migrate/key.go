package migrate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

// errChanged is a key that kept changing under the migrator.
var errChanged = errors.New("changed by another writer on every attempt")

// migrateKey rewrites one key; changed reports a rewrite.
func migrateKey(ctx context.Context, c *runtime.Client, d Decl, key []byte, bw *lockedWriter, retries int) (changed bool, err error) {
	for range retries {
		old, ver, err := c.Get(ctx, key)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			return false, nil // deleted since it was listed
		case err != nil:
			return false, err
		}
		cur, err := d.Codec.Current(old)
		if err != nil {
			return false, err
		}
		if bytes.Equal(cur, old) {
			return false, nil
		}
		if err := bw.line(BackupLine{Key: key, Old: old, New: cur, Version: ver.String()}); err != nil {
			return false, err
		}
		deleted, _, err := c.VDel(ctx, key, old, runtime.DelOptions{})
		switch {
		case errors.Is(err, runtime.ErrConditionNotMet):
			continue // changed since read: read again
		case err != nil:
			return false, err
		case !deleted:
			return false, nil // deleted by someone else
		}
		_, err = c.Set(ctx, key, cur, runtime.SetOptions{Condition: runtime.IfNotExists})
		switch {
		case errors.Is(err, runtime.ErrConditionNotMet):
			continue // a writer wrote in between: its value stays, read it again
		case err != nil:
			return false, err
		}
		return true, nil
	}
	return false, errChanged
}

// count lists pattern's keys; -1 when listing fails.
func count(ctx context.Context, c *runtime.Client, pattern string) int64 {
	var n int64
	for k, err := range c.ListKeys(pattern, runtime.ListOptions{}).All(ctx) {
		if err != nil {
			return -1
		}
		if !bytes.HasPrefix(k, []byte(Prefix)) {
			n++
		}
	}
	return n
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedWriter) line(b BackupLine) error {
	j, err := json.Marshal(b)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Flushed at once: the line is out before the key is touched.
	if _, err := l.w.Write(append(j, '\n')); err != nil {
		return err
	}
	return l.w.Flush()
}

func (l *lockedWriter) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
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
