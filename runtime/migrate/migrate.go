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
// # How a page is migrated
//
// Apply lists every declaration's keys a listing page at a time. For each
// page it
//
//  1. reads the page's values, Options.Workers GETs in flight over the
//     client's one connection (bounded by Options.Rate);
//  2. leaves alone every key that is already current (no further
//     request), that is gone, or that does not decode (counted as failed);
//  3. writes one backup line per key it will touch (key, old bytes, new
//     bytes, version; StepBefore) and flushes the backup once for the
//     page, before any key of the page is touched;
//  4. rewrites the page's outdated keys, Options.Workers at a time, and
//     writes a StepWritten line (the version the write gave the key) for
//     each key written, flushed at the end of the page.
//
// An unguarded key is rewritten by deleting it only if it still holds the
// bytes read (VDEL), then setting the new bytes only if it is still absent
// (SET NX). A reader sees the key absent between the two requests. A key
// changed since it was read is not deleted and is read again (its new
// backup line flushed before it is touched); a writer that sets the key
// in between wins, and its value is read again; Options.Retries bounds
// how often. A delete in between is not seen: another client's DEL or
// VDEL after the VDEL finds nothing, and the SET NX (sent as soon as the
// VDEL answers) brings the key back migrated; the protocol has no
// compare-and-set to close that window (give such keys a Guard). A key's
// TTL is not kept.
//
// A key whose Decl has a Guard (the schema guards it with a lock; the
// generated Migrations set it with Decl.GuardedBy) is
// rewritten under that lock instead: Apply acquires the guard's lease
// (waiting while a writer holds it), reads the key again, writes and
// flushes its backup line and sets the new bytes with the lease's fencing
// token, with no gap a reader could see. Consecutive keys with the same
// lock share one lease, released when the lock changes and at the end of
// the page. Guarded keys are rewritten one at a time. A key written with a
// fencing token whose Decl has no Guard cannot be rewritten without its
// lock: it is counted as failed with ErrFenced.
//
// # One migrator, resumable
//
// The position (the schema id, the declarations, and the declaration and
// listing cursor of the next page) is kept in the store under
// "$ssgen/migrate/<name>/position", and a lease on
// "$ssgen/migrate/<name>/lock" (runtime.Lock) makes sure one migrator runs
// at a time: a second Apply fails with ErrBusy, or waits for the lease
// with Options.Wait. Apply after an interruption resumes at the saved page
// if it migrates to the same schema (Options.SchemaID) with the same
// declarations; otherwise it refuses with a *PositionMismatchError
// (errors.Is ErrPositionMismatch) until Options.Restart discards the
// position. A finished run records what the data was migrated to under
// "$ssgen/migrate/<name>/done" (LastRun reads it) and deletes the
// position.
//
// # Throughput
//
// Every outdated key costs three requests (GET, VDEL, SET NX), a current
// key one; the migrator's rate is bounded by how many requests the store
// answers per second. Options.Workers bounds the requests in flight, and
// with it what the migration costs other clients: docs/runtime.md gives
// measured numbers.
package migrate

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

// ErrBusy is returned by Apply when another migrator holds the lease.
var ErrBusy = errors.New("migrate: another migrator holds the lease")

// ErrPositionMismatch is what a *PositionMismatchError is (errors.Is): the
// saved position was left by a run with another schema or other
// declarations.
var ErrPositionMismatch = errors.New("migrate: the saved position belongs to another migration")

// ErrFenced is a key's error when it was written with a fencing token (a
// guarded writer's) but its Decl has no Guard: it is not rewritten.
var ErrFenced = errors.New("key is fenced (written under a lock's fencing token) and its declaration has no Guard: set Decl.Guard to migrate it under the lock")

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
	// Guard, when set, gives the guard lock of a concrete key (ok false:
	// the key is not guarded). Apply rewrites such keys under the lock's
	// lease with a fenced SET. GuardedBy sets it from path templates.
	Guard func(key []byte) (lock []byte, ok bool)
	// Version, when set, reads the version stamp of a stored value
	// (versioned codecs, see For); Validate counts keys by it.
	Version func(value []byte) (int, error)
	// Decodes, when set, returns an error for a value that does not
	// decode as the declaration's type at any version it declares:
	// RollbackWith restores no bytes it refuses (a backup's Old was read
	// from the store, so it always decodes as some form of the type).
	Decodes func(value []byte) error
}

// Progress is reported after each page. Done and Total count the keys of
// Decl this run lists: a resumed run starts at the saved page, and so
// does its Total (-1 when the keys could not be counted).
type Progress struct {
	Decl      string  `json:"decl"`
	Done      int64   `json:"done"`
	Total     int64   `json:"total"`
	Rewritten int64   `json:"rewritten"`
	Skipped   int64   `json:"skipped"`
	Rate      float64 `json:"rate"`
}

// DefaultWorkers is Options.Workers when zero: the requests Apply keeps in
// flight. Measured (docs/runtime.md): 2 to 8 in flight cost a concurrent
// reader's GET p99 about the same (2 to 4 times its p99 with no migration
// running, on a shared 2-core machine), 32 about 14 times; 8 is the
// fastest of those.
const DefaultWorkers = 8

// Options tune Apply.
type Options struct {
	// Name distinguishes independent migrations; "default" when empty.
	Name string
	// SchemaID identifies the schema the data is migrated to (the lowercase
	// hex sha256 of the schema file's bytes). It is recorded in the saved
	// position, which only a run with the same SchemaID resumes, and in
	// the Done record.
	SchemaID string
	// Restart discards a saved position (of any schema) and starts over.
	Restart bool
	// Wait makes Apply wait for another migrator's lease instead of
	// failing with ErrBusy (until ctx ends).
	Wait bool
	// Waiting, when set, is called once when Wait finds the lease held,
	// before Apply starts waiting, with the lock key and the value it
	// holds (nil when it could not be read).
	Waiting func(lockKey, holder []byte)
	// GuardWaiting, when set, is called each time a guarded key's lock is
	// held by a writer, before Apply waits for its lease, with the lock
	// key and the value it holds (nil when it could not be read).
	GuardWaiting func(lockKey, holder []byte)
	// Backup receives one JSON line per key before it is rewritten. Required.
	Backup io.Writer
	// Rate bounds keys read per second; zero is unbounded.
	Rate float64
	// Workers is how many requests Apply keeps in flight;
	// DefaultWorkers when zero.
	Workers int
	// LockTTL is the TTL of the migrator's lease and of guard leases; 10s
	// when zero.
	LockTTL time.Duration
	// Progress, when set, is called after each page.
	Progress func(Progress)
	// Retries bounds how often a key changed under the migrator is read
	// again; 10 when zero.
	Retries int
	// Now gives the time recorded in Done; time.Now when nil.
	Now func() time.Time
}

// Result sums up a run.
type Result struct {
	Seen      int64 // keys listed
	Rewritten int64 // keys rewritten
	Failed    int64 // keys left as they were: undecodable, fenced without a Guard, or changed more than Retries times
	Resumed   bool  // the run continued a saved position
	Locked    bool  // the run took the migrator's lease (false: it never started)
	// FirstError is the first key's error (Failed counts them all).
	FirstError error
}

// BackupLine is one line of a backup file (JSON; bytes in base64).
//
// Apply writes a key's line with Step StepBefore (flushed before the key
// is touched), and once its write landed a second line with Step
// StepWritten and Written, the version its SET gave the key. Rollback
// restores a key only when the key still has that version. Lines without
// Step (backups of earlier releases) are restored by their bytes alone.
type BackupLine struct {
	Key     []byte `json:"key"`
	Old     []byte `json:"old"`     // the bytes read, restored by Rollback
	New     []byte `json:"new"`     // the bytes the migrator writes
	Version string `json:"version"` // the version Old was read at
	Step    string `json:"step,omitempty"`
	Written string `json:"written,omitempty"` // StepWritten: the version the migrator's SET gave the key
}

// Steps of a BackupLine.
const (
	StepBefore  = "before"  // written and flushed before the key is touched
	StepWritten = "written" // written after the migrator's write landed
)

func positionKey(name string) []byte { return []byte(Prefix + name + "/position") }
func lockKey(name string) []byte     { return []byte(Prefix + name + "/lock") }
func doneKey(name string) []byte     { return []byte(Prefix + name + "/done") }

// position is the stored position: the next page to migrate.
type position struct {
	Schema string `json:"schema"`
	Decls  string `json:"decls"` // declsDigest of the run's declarations
	Decl   string `json:"decl"`  // name of the declaration at Index; "" past the last
	Index  int    `json:"index"`
	Cursor []byte `json:"cursor,omitempty"`
}

// maxPosition bounds the stored position Apply reads.
const maxPosition = 64 << 10

func encodePos(p position) []byte {
	b, _ := json.Marshal(p) // strings and bytes only: cannot fail
	return b
}

func decodePos(b []byte) (position, error) {
	var p position
	if len(b) > maxPosition || json.Unmarshal(b, &p) != nil || p.Index < 0 {
		shown := b
		if len(shown) > 64 { // another client's bytes: bounded in the message
			shown = shown[:64]
		}
		return position{}, fmt.Errorf("migrate: malformed position %q (run with Options.Restart, or delete %s<name>/position, to start over)", shown, Prefix)
	}
	return p, nil
}

// declsDigest identifies a declaration list: names and patterns, in order.
func declsDigest(decls []Decl) string {
	h := sha256.New()
	for _, d := range decls {
		fmt.Fprintf(h, "%d:%s%d:%s", len(d.Name), d.Name, len(d.Pattern), d.Pattern)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PositionMismatchError is Apply's refusal to resume a saved position left
// by a run with another schema or other declarations.
type PositionMismatchError struct {
	Name        string // the migration's name
	SavedSchema string // the schema id the saved position records
	Schema      string // Options.SchemaID of this run
	SavedDecl   string // the declaration the saved position is at
	Reason      string
}

func (e *PositionMismatchError) Error() string {
	return fmt.Sprintf("migrate: %s: the saved position (at declaration %.64q, schema %.64q) %s; run with the schema and declarations of that run to resume it, or with Options.Restart (ssgen migrate apply --restart) to discard it and start over",
		e.Name, e.SavedDecl, e.SavedSchema, e.Reason)
}

// Is reports ErrPositionMismatch.
func (e *PositionMismatchError) Is(target error) bool { return target == ErrPositionMismatch }

// check refuses a saved position this run cannot continue.
func (p position) check(name, schema string, decls []Decl) error {
	mis := func(reason string) error {
		return &PositionMismatchError{Name: name, SavedSchema: p.Schema, Schema: schema, SavedDecl: p.Decl, Reason: reason}
	}
	switch {
	case p.Schema != schema:
		return mis(fmt.Sprintf("was left by a run to another schema (this run: %.64q)", schema))
	case p.Decls != declsDigest(decls):
		return mis("was left by a run with other declarations")
	case p.Index > len(decls) || p.Index == len(decls) && p.Decl != "" || p.Index < len(decls) && decls[p.Index].Name != p.Decl:
		return mis("does not name this run's declaration at its index")
	}
	return nil
}

// Done records what a finished run migrated the data to.
type Done struct {
	Schema    string    `json:"schema"`    // Options.SchemaID
	At        time.Time `json:"at"`        // when the run finished
	Decls     []string  `json:"decls"`     // the declarations' names
	Seen      int64     `json:"seen"`      // of the last run (a resumed run: since it resumed)
	Rewritten int64     `json:"rewritten"` // likewise
	Failed    int64     `json:"failed"`    // likewise
}

// maxDone bounds the Done record LastRun reads.
const maxDone = 1 << 20

// LastRun reads the record the last finished run of the migration name
// left; ok is false when there is none.
func LastRun(ctx context.Context, c *runtime.Client, name string) (Done, bool, error) {
	if name == "" {
		name = "default"
	}
	b, _, err := c.Get(ctx, doneKey(name))
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return Done{}, false, nil
	case err != nil:
		return Done{}, false, err
	}
	var d Done
	if len(b) > maxDone || json.Unmarshal(b, &d) != nil {
		return Done{}, false, fmt.Errorf("migrate: malformed record under %s (%d bytes)", doneKey(name), len(b))
	}
	return d, true, nil
}

// Apply migrates every key of decls. When ctx is cancelled it stops after
// the keys in flight and returns ctx's error; the saved position is that
// of the last page completed (by this run, or the one it resumed), so a
// run interrupted inside its first page saves none, and the next run
// reads the keys of the unfinished page again (a key already rewritten is
// left alone).
//
// Whoever can write the reserved key "$ssgen/migrate/<name>/position"
// controls where Apply resumes: a Result with Resumed set does not prove
// every key was walked; Validate does (ssgen migrate apply runs it after
// a resumed run).
func Apply(ctx context.Context, c *runtime.Client, decls []Decl, opts Options) (Result, error) {
	var res Result
	if opts.Backup == nil {
		return res, errors.New("migrate: Options.Backup is required")
	}
	if opts.Name == "" {
		opts.Name = "default"
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = 10 * time.Second
	}
	if opts.Retries <= 0 {
		opts.Retries = 10
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lock := runtime.NewLock(c, lockKey(opts.Name), opts.LockTTL)
	var lease *runtime.Lease
	if opts.Wait {
		l, ok, err := lock.TryAcquire(ctx)
		if err == nil && !ok {
			if opts.Waiting != nil {
				h, _, _ := lock.Holder(ctx)
				opts.Waiting(lockKey(opts.Name), h)
			}
			l, err = lock.Acquire(ctx)
		}
		if err != nil {
			return res, err
		}
		lease = l
	} else {
		l, ok, err := lock.TryAcquire(ctx)
		if err != nil {
			return res, err
		}
		if !ok {
			return res, ErrBusy
		}
		lease = l
	}
	res.Locked = true
	defer func() { _ = lease.Release(context.WithoutCancel(ctx)) }()
	// The migrator's own writes carry the lease's fencing token, so a
	// migrator that lost its lease cannot move the position back.
	tok := lease.Token()

	digest := declsDigest(decls)
	pos := position{Schema: opts.SchemaID, Decls: digest}
	if len(decls) > 0 {
		pos.Decl = decls[0].Name
	}
	switch b, _, err := c.Get(ctx, positionKey(opts.Name)); {
	case err == nil && !opts.Restart:
		saved, err := decodePos(b)
		if err != nil {
			return res, err
		}
		if err := saved.check(opts.Name, opts.SchemaID, decls); err != nil {
			return res, err
		}
		pos = saved
		res.Resumed = true
	case err == nil, errors.Is(err, runtime.ErrNotFound):
	default:
		return res, err
	}

	r := &runner{c: c, opts: opts, bw: bufio.NewWriter(opts.Backup), pace: newPacer(opts.Rate)}
	defer func() { _ = r.bw.Flush() }()
	start := time.Now()
	for di := pos.Index; di < len(decls); di++ {
		d := decls[di]
		cursor := runtime.Cursor(pos.Cursor) // a resumed run's page, else ""
		total := int64(-1)
		if opts.Progress != nil {
			total = count(ctx, c, d.Pattern, cursor) // what this run lists
		}
		var st pageStats
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
			if err := r.page(ctx, d, keys, &st); err != nil {
				st.addTo(&res)
				return res, err
			}
			if e := st.firstErr.Load(); e != nil && res.FirstError == nil {
				res.FirstError = *e
			}
			if ctx.Err() != nil {
				// The page may not be finished: resume at it (migrating
				// a key again is a no-op).
				st.addTo(&res)
				return res, ctx.Err()
			}
			cursor = next
			last := next == ""
			pos.Index, pos.Decl, pos.Cursor = di, d.Name, []byte(next)
			if last {
				pos.Index, pos.Decl, pos.Cursor = di+1, "", nil
				if di+1 < len(decls) {
					pos.Decl = decls[di+1].Name
				}
			}
			if _, err := c.Set(context.WithoutCancel(ctx), positionKey(opts.Name), encodePos(pos), runtime.SetOptions{FencingToken: tok}); err != nil {
				st.addTo(&res)
				return res, err
			}
			if opts.Progress != nil {
				el := time.Since(start).Seconds()
				p := Progress{Decl: d.Name, Done: st.done.Load(), Total: total, Rewritten: st.rewritten.Load(), Skipped: st.failed.Load()}
				if el > 0 {
					p.Rate = float64(p.Done) / el
				}
				opts.Progress(p)
			}
			if last {
				break
			}
		}
		st.addTo(&res)
		pos.Cursor = nil
	}
	names := make([]string, len(decls))
	for i, d := range decls {
		names[i] = d.Name
	}
	done, _ := json.Marshal(Done{Schema: opts.SchemaID, At: opts.Now().UTC(), Decls: names, Seen: res.Seen, Rewritten: res.Rewritten, Failed: res.Failed})
	wctx := context.WithoutCancel(ctx)
	if _, err := c.Set(wctx, doneKey(opts.Name), done, runtime.SetOptions{FencingToken: tok}); err != nil {
		return res, err
	}
	_, _, err := c.Del(wctx, positionKey(opts.Name), runtime.DelOptions{FencingToken: tok})
	return res, err
}

// pageStats counts one declaration's keys.
type pageStats struct {
	done, rewritten, failed atomic.Int64
	firstErr                atomic.Pointer[error]
}

func (s *pageStats) fail(d Decl, key []byte, err error) {
	s.failed.Add(1)
	e := fmt.Errorf("migrate: %s: key %.200q: %w", d.Name, key, err)
	s.firstErr.CompareAndSwap(nil, &e)
}

func (s *pageStats) addTo(r *Result) {
	r.Seen += s.done.Swap(0)
	r.Rewritten += s.rewritten.Swap(0)
	r.Failed += s.failed.Swap(0)
	if e := s.firstErr.Load(); e != nil && r.FirstError == nil {
		r.FirstError = *e
	}
}

// For makes the Decl of keys matching pattern whose values c reads: c's
// Current when it has one (codec.Upgrader: Evolved, Versioned), otherwise
// the bytes c encodes the decoded value to. A Versioned codec also gives
// the Decl its Version, so Validate counts keys by stored version.
func For[T any](name, pattern string, c codec.Codec[T]) Decl {
	d := Decl{Name: name, Pattern: pattern, Codec: roundTrip[T]{c}}
	if u, ok := c.(codec.Upgrader); ok {
		d.Codec = u
	}
	switch v := c.(type) {
	case codec.Versioned[T]:
		d.Version = versionOf(v.JSON, v.Oldest)
	case *codec.Versioned[T]:
		d.Version = versionOf(v.JSON, v.Oldest)
	}
	return d
}

// GuardedBy returns d with a Guard for keys of the path template keyPath
// guarded by the lock at the path template lockPath ("{name}" segments are
// parameters; the lock's take the key's values of the same names): see
// runtime.LockKeyOf. A listed key whose shape is not keyPath's gets no
// lock, and if it was written with a fencing token it fails with
// ErrFenced instead of being rewritten under a wrong lock. Generated
// Migrations declare every guarded key this way.
func (d Decl) GuardedBy(keyPath, lockPath string) Decl {
	d.Guard = runtime.LockKeyOf(keyPath, lockPath)
	return d
}

// versionOf reads a versioned type's stamp; a value without one is of the
// oldest version.
func versionOf(json bool, oldest int) func([]byte) (int, error) {
	return func(b []byte) (int, error) {
		v, ok, err := codec.ReadVersion(b, json)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return oldest, nil
		}
		return v, nil
	}
}

type roundTrip[T any] struct{ c codec.Codec[T] }

func (r roundTrip[T]) Current(data []byte) ([]byte, error) {
	v, err := r.c.Decode(data)
	if err != nil {
		return nil, err
	}
	return r.c.Encode(v)
}
