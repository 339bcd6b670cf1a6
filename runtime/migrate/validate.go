package migrate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime"
)

// Counts are one declaration's keys by state.
type Counts struct {
	Decl     string `json:"decl"`
	Current  int64  `json:"current"`  // stored as the current schema writes it
	Outdated int64  `json:"outdated"` // decodes, but Current changes it
	Invalid  int64  `json:"invalid"`  // does not decode
	// Versions counts the keys that decode by the version stamp ($v) they
	// are stored with (a value without a stamp counts as the type's oldest
	// version); set only when the Decl has a Version (versioned codecs).
	Versions map[int]int64 `json:"versions,omitempty"`
}

// Validate reads every key of decls, a listing page at a time with the
// page's GETs in flight together (runtime.Client.GetMany), and counts them
// by state. A migration is complete when every declaration's Outdated and
// Invalid are zero.
func Validate(ctx context.Context, c *runtime.Client, decls []Decl) ([]Counts, error) {
	out := make([]Counts, 0, len(decls))
	for _, d := range decls {
		n := Counts{Decl: d.Name}
		if d.Version != nil {
			n.Versions = map[int]int64{}
		}
		var cursor runtime.Cursor
		for {
			page, next, err := c.ScanPage(ctx, d.Pattern, cursor)
			if err != nil {
				return out, err
			}
			keys := page[:0]
			for _, k := range page {
				if !bytes.HasPrefix(k, []byte(Prefix)) {
					keys = append(keys, k)
				}
			}
			vals, err := c.GetMany(ctx, keys, runtime.GetManyOptions{})
			if err != nil {
				return out, err
			}
			for _, r := range vals {
				if errors.Is(r.Err, runtime.ErrNotFound) {
					continue // deleted since it was listed
				}
				cur, err := d.Codec.Current(r.Value)
				switch {
				case err != nil:
					n.Invalid++
					continue
				case bytes.Equal(cur, r.Value):
					n.Current++
				default:
					n.Outdated++
				}
				if d.Version != nil {
					if v, err := d.Version(r.Value); err == nil {
						n.Versions[v]++
					}
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
		out = append(out, n)
	}
	return out, nil
}

// RollbackResult sums up a rollback.
type RollbackResult struct {
	Restored int64 // keys set back to their backed-up bytes
	Kept     int64 // keys that no longer held what the migration wrote: left alone
	// Refused counts the keys Rollback does not restore whatever they
	// hold: reserved keys ("$ssgen/..."), keys no RollbackOptions.Decls
	// pattern matches, and keys whose lines record no write of the
	// migration.
	Refused int64
	// Skipped lists the first MaxSkipped keys left alone (Kept and
	// Refused), each with its reason.
	Skipped []Skipped
}

// Skipped is a key Rollback left alone, and why.
type Skipped struct {
	Key    []byte
	Reason string
}

// MaxSkipped bounds RollbackResult.Skipped.
const MaxSkipped = 100

// Reasons of a Skipped key.
const (
	SkipReserved   = "reserved key ($ssgen/...): never restored"
	SkipUndeclared = "no declaration matches the key: not restored"
	SkipNotWritten = "the backup records no write of the migration to the key"
	SkipChanged    = "changed since the migration wrote it: kept"
	SkipOldInvalid = "the backup's old bytes do not decode as the declaration's type: not restored"
)

// RollbackOptions narrow Rollback.
type RollbackOptions struct {
	// Decls, when not nil, are the declarations whose keys Rollback
	// restores: a key no Decl's Pattern matches is refused, and so is a
	// key whose lines' Old bytes the first matching Decl's Decodes
	// refuses (when set).
	Decls []Decl
}

// maxBackupLine bounds one line of a backup file.
const maxBackupLine = 64 << 20

// reserved is the prefix of every key ssgen reserves.
const reserved = "$ssgen/"

// Rollback is RollbackWith with no options.
func Rollback(ctx context.Context, c *runtime.Client, backup io.Reader) (RollbackResult, error) {
	return RollbackWith(ctx, c, backup, RollbackOptions{})
}

// RollbackWith restores a backup written by Apply, key by key from the
// newest line, only for keys that still hold what the migration wrote.
// In a backup with steps (any line has a Step), a key is restored only
// when its current version is one a StepWritten line of it records (and
// it holds that line's New bytes): an application's later write of the
// same bytes has another version and is kept, and a key with no such
// line is refused. A key of a backup without steps (earlier releases)
// is restored when it holds a line's New bytes. Restoring deletes the key if it holds
// those bytes (VDEL) and sets its old bytes if it is still absent (SET
// NX). Reserved keys ("$ssgen/...") are never restored, nor keys no
// opts.Decls pattern matches. A backup line names any key, so a backup
// is only as trustworthy as whoever could write the file: restrict it
// with opts.Decls.
func RollbackWith(ctx context.Context, c *runtime.Client, backup io.Reader, opts RollbackOptions) (RollbackResult, error) {
	var res RollbackResult
	var lines []BackupLine
	sc := bufio.NewScanner(backup)
	sc.Buffer(make([]byte, 0, 64<<10), maxBackupLine)
	blank := 0
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			blank++
			continue
		}
		var l BackupLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || len(l.Key) == 0 ||
			l.Step != "" && l.Step != StepBefore && l.Step != StepWritten || (l.Step == StepWritten) != (l.Written != "") {
			return res, fmt.Errorf("migrate: backup line %d is not a backup entry", n)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return res, fmt.Errorf("migrate: backup line %d is longer than %d MiB, the most a backup line may hold", len(lines)+blank+1, maxBackupLine>>20)
		}
		return res, fmt.Errorf("migrate: reading the backup: %w", err)
	}
	// Decided for the whole file: a forged line without a step for a key
	// must not escape the version check the file's other lines get.
	stepped := slices.ContainsFunc(lines, func(l BackupLine) bool { return l.Step != "" })
	globs := make([]*glob.Pattern, len(opts.Decls))
	for i, d := range opts.Decls {
		globs[i] = glob.Compile(d.Pattern)
	}
	skip := func(key []byte, reason string) {
		if reason == SkipChanged {
			res.Kept++
		} else {
			res.Refused++
		}
		if len(res.Skipped) < MaxSkipped {
			res.Skipped = append(res.Skipped, Skipped{Key: key, Reason: reason})
		}
	}
	// A key's lines, newest first, in the order of each key's newest line.
	byKey := map[string][]BackupLine{}
	var order []string
	for i := len(lines) - 1; i >= 0; i-- {
		k := string(lines[i].Key)
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], lines[i])
	}
	for _, k := range order {
		ls := byKey[k]
		key := ls[0].Key
		d := slices.IndexFunc(globs, func(g *glob.Pattern) bool { return g.Match(k) })
		switch {
		case strings.HasPrefix(k, reserved):
			skip(key, SkipReserved)
			continue
		case opts.Decls != nil && d < 0:
			skip(key, SkipUndeclared)
			continue
		case d >= 0 && opts.Decls[d].Decodes != nil && slices.ContainsFunc(ls, func(l BackupLine) bool { return opts.Decls[d].Decodes(l.Old) != nil }):
			skip(key, SkipOldInvalid)
			continue
		}
		var restored bool
		var err error
		if stepped {
			restored, err = restoreWritten(ctx, c, ls)
		} else {
			restored, err = restoreBytes(ctx, c, ls)
		}
		switch {
		case errors.Is(err, errNotWritten):
			skip(key, SkipNotWritten)
		case err != nil:
			return res, err
		case restored:
			res.Restored++
		default:
			skip(key, SkipChanged)
		}
	}
	return res, nil
}

var errNotWritten = errors.New("not written")

// restoreWritten restores a key of a backup with steps: only if its
// current version is one a StepWritten line records.
func restoreWritten(ctx context.Context, c *runtime.Client, ls []BackupLine) (bool, error) {
	key := ls[0].Key
	if !slices.ContainsFunc(ls, func(l BackupLine) bool { return l.Step == StepWritten }) {
		return false, errNotWritten
	}
	val, ver, err := c.Get(ctx, key)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	for _, l := range ls {
		if l.Step == StepWritten && l.Written == ver.String() && bytes.Equal(l.New, val) {
			ok, err := restore(ctx, c, l)
			if errors.Is(err, errNotHeld) {
				err = nil
			}
			return ok, err
		}
	}
	return false, nil
}

// restoreBytes restores a key of a backup without steps: if it holds a
// line's New bytes (an older line of the key may be the write that
// landed: an attempt whose VDEL failed also left a line).
func restoreBytes(ctx context.Context, c *runtime.Client, ls []BackupLine) (bool, error) {
	for _, l := range ls {
		ok, err := restore(ctx, c, l)
		if !errors.Is(err, errNotHeld) {
			return ok, err
		}
	}
	return false, nil
}

// errNotHeld: the key does not hold the line's New bytes.
var errNotHeld = errors.New("not held")

// restore swaps l.Key's l.New for l.Old: errNotHeld when it does not
// hold l.New; false when a writer wrote in between (its value stays).
func restore(ctx context.Context, c *runtime.Client, l BackupLine) (bool, error) {
	res, _, err := swap(ctx, c, l.Key, l.New, l.Old)
	switch {
	case err != nil:
		return false, err
	case res == swapChanged, res == swapGone:
		return false, errNotHeld
	}
	return res == swapped, nil
}
