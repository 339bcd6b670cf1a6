// Package migrate rewrites the values of a state store to the form the
// current schema writes, without clobbering concurrent writers.
//
// A Decl names a glob of keys and the function that gives the bytes a
// stored value encodes to today: a generated key's Codec() implements it
// (codec.Upgrader: Evolved and Versioned codecs, whose Decode also runs a
// versioned type's user conversions), so a program that links its
// generated package migrates with those conversions, which a tool reading
// only the schema file cannot run.
//
// Apply lists every declaration's keys page by page and rewrites each key
// whose value changes under Current: it reads the value, writes a backup
// line (key, old bytes, new bytes, version), deletes the key only if it
// still holds the bytes read (VDEL), then sets the new bytes only if the
// key is still absent (SET NX). A reader sees the key absent between the
// two requests. A key changed since it was read is not deleted and is read
// again; a writer that writes in between wins, and its value is read
// again. A key's TTL is not kept.
//
// The position (declaration and listing cursor of the next page) is kept
// in the store under "$ssgen/migrate/<name>/position", and a lease on
// "$ssgen/migrate/<name>/lock" (runtime.Lock) makes sure one migrator runs
// at a time: a second Apply fails with ErrBusy. Apply after an interruption
// resumes at the saved page; a finished run deletes the position.
package migrate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

// ErrBusy is returned by Apply when another migrator holds the lease.
var ErrBusy = errors.New("migrate: another migrator holds the lease")

// Prefix is the reserved key prefix of the migrator's own keys.
const Prefix = "$ssgen/migrate/"

// Decl is one declaration to migrate.
type Decl struct {
	// Name names the declaration in progress and errors.
	Name string
	// Pattern is the glob of its keys (runtime.ListKeys syntax).
	Pattern string
	// Codec gives the bytes a stored value encodes to today.
	Codec codec.Upgrader
}

// Progress is reported after each page.
type Progress struct {
	Decl      string  `json:"decl"`
	Done      int64   `json:"done"`
	Total     int64   `json:"total"`
	Rewritten int64   `json:"rewritten"`
	Skipped   int64   `json:"skipped"`
	Rate      float64 `json:"rate"`
}

// Options tune Apply.
type Options struct {
	// Name distinguishes independent migrations; "default" when empty.
	Name string
	// Backup receives one JSON line per key before it is rewritten. Required.
	Backup io.Writer
	// Rate bounds keys handled per second; zero is unbounded.
	Rate float64
	// Workers is how many keys are handled at once; 32 when zero.
	Workers int
	// LockTTL is the lease's TTL; 10s when zero.
	LockTTL time.Duration
	// Progress, when set, is called after each page.
	Progress func(Progress)
	// Retries bounds how often a key changed under the migrator is read
	// again; 10 when zero.
	Retries int
}

// Result sums up a run.
type Result struct {
	Seen      int64 // keys listed
	Rewritten int64 // keys rewritten
	Failed    int64 // keys left as they were: undecodable, or changed more than Retries times
	Resumed   bool  // the run continued a saved position
	// FirstError is the first key's error (Failed counts them all).
	FirstError error
}

func (r *Result) add(done, rewritten, failed *atomic.Int64) {
	r.Seen += done.Load()
	r.Rewritten += rewritten.Load()
	r.Failed += failed.Load()
}

// BackupLine is one line of a backup file.
type BackupLine struct {
	Key     []byte `json:"key"`
	Old     []byte `json:"old"`
	New     []byte `json:"new"`
	Version string `json:"version"`
}

func positionKey(name string) []byte { return []byte(Prefix + name + "/position") }
func lockKey(name string) []byte     { return []byte(Prefix + name + "/lock") }

func encodePos(decl int, cur runtime.Cursor) []byte {
	return []byte(strconv.Itoa(decl) + " " + base64.StdEncoding.EncodeToString([]byte(cur)))
}

func decodePos(b []byte) (int, runtime.Cursor, error) {
	bad := func() error {
		shown := b
		if len(shown) > 64 { // another client's bytes: bounded in the message
			shown = shown[:64]
		}
		return fmt.Errorf("migrate: malformed position %q (delete %s%s to start over)", shown, Prefix, "<name>/position")
	}
	d, c, ok := strings.Cut(string(b), " ")
	if !ok {
		return 0, "", bad()
	}
	n, err := strconv.Atoi(d)
	if err != nil || n < 0 {
		return 0, "", bad()
	}
	cur, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad()
	}
	return n, runtime.Cursor(cur), nil
}

// Apply migrates every key of decls. When ctx is cancelled it stops after
// the keys in flight, saves its position and returns ctx's error.
func Apply(ctx context.Context, c *runtime.Client, decls []Decl, opts Options) (Result, error) {
	var res Result
	if opts.Backup == nil {
		return res, errors.New("migrate: Options.Backup is required")
	}
	if opts.Name == "" {
		opts.Name = "default"
	}
	if opts.Workers <= 0 {
		opts.Workers = 32
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = 10 * time.Second
	}
	if opts.Retries <= 0 {
		opts.Retries = 10
	}
	lease, ok, err := runtime.NewLock(c, lockKey(opts.Name), opts.LockTTL).TryAcquire(ctx)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, ErrBusy
	}
	defer func() { _ = lease.Release(context.WithoutCancel(ctx)) }()
	// The migrator's own writes carry the lease's fencing token, so a
	// migrator that lost its lease cannot move the position back.
	tok := lease.Token()

	startDecl, cursor := 0, runtime.Cursor("")
	switch b, _, err := c.Get(ctx, positionKey(opts.Name)); {
	case err == nil:
		if startDecl, cursor, err = decodePos(b); err != nil {
			return res, err
		}
		res.Resumed = true
	case !errors.Is(err, runtime.ErrNotFound):
		return res, err
	}

	bw := &lockedWriter{w: bufio.NewWriter(opts.Backup)}
	defer bw.flush()
	pace := newPacer(opts.Rate)
	start := time.Now()
	for di := startDecl; di < len(decls); di++ {
		d := decls[di]
		total := int64(-1)
		if opts.Progress != nil {
			total = count(ctx, c, d.Pattern)
		}
		var done, rewritten, skipped atomic.Int64
		for {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			select {
			case <-lease.Lost():
				return res, lease.Err()
			default:
			}
			keys, next, err := c.ScanPage(ctx, d.Pattern, cursor)
			if err != nil {
				return res, err
			}
			sem := make(chan struct{}, opts.Workers)
			var wg sync.WaitGroup
			var werr atomic.Value
			for _, k := range keys {
				if bytes.HasPrefix(k, []byte(Prefix)) {
					continue
				}
				if err := pace.wait(ctx); err != nil {
					break // ctx cancelled: finish the page's keys in flight, keep the position
				}
				sem <- struct{}{}
				wg.Add(1)
				go func(k []byte) {
					defer func() { <-sem; wg.Done() }()
					changed, err := migrateKey(context.WithoutCancel(ctx), c, d, k, bw, opts.Retries)
					done.Add(1)
					switch {
					case err != nil:
						skipped.Add(1)
						werr.CompareAndSwap(nil, fmt.Errorf("migrate: %s: key %q: %w", d.Name, k, err))
					case changed:
						rewritten.Add(1)
					}
				}(k)
			}
			wg.Wait()
			if err := bw.flush(); err != nil {
				return res, err
			}
			if e, ok := werr.Load().(error); ok && res.FirstError == nil {
				res.FirstError = e
			}
			if ctx.Err() != nil {
				// The page may not be finished: resume at it (migrating
				// a key again is a no-op).
				res.add(&done, &rewritten, &skipped)
				return res, ctx.Err()
			}
			cursor = next
			last := next == ""
			pd, pc := di, next
			if last {
				pd, pc = di+1, ""
			}
			if _, err := c.Set(context.WithoutCancel(ctx), positionKey(opts.Name), encodePos(pd, pc), runtime.SetOptions{FencingToken: tok}); err != nil {
				return res, err
			}
			if opts.Progress != nil {
				el := time.Since(start).Seconds()
				p := Progress{Decl: d.Name, Done: done.Load(), Total: total, Rewritten: rewritten.Load(), Skipped: skipped.Load()}
				if el > 0 {
					p.Rate = float64(p.Done) / el
				}
				opts.Progress(p)
			}
			if last {
				break
			}
		}
		res.add(&done, &rewritten, &skipped)
		cursor = ""
	}
	_, _, err = c.Del(context.WithoutCancel(ctx), positionKey(opts.Name), runtime.DelOptions{FencingToken: tok})
	return res, err
}

// For makes the Decl of keys matching pattern whose values c reads: c's
// Current when it has one (codec.Upgrader: Evolved, Versioned), otherwise
// the bytes c encodes the decoded value to.
func For[T any](name, pattern string, c codec.Codec[T]) Decl {
	if u, ok := c.(codec.Upgrader); ok {
		return Decl{Name: name, Pattern: pattern, Codec: u}
	}
	return Decl{Name: name, Pattern: pattern, Codec: roundTrip[T]{c}}
}

type roundTrip[T any] struct{ c codec.Codec[T] }

func (r roundTrip[T]) Current(data []byte) ([]byte, error) {
	v, err := r.c.Decode(data)
	if err != nil {
		return nil, err
	}
	return r.c.Encode(v)
}
