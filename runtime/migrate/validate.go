package migrate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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
}

// maxBackupLine bounds one line of a backup file.
const maxBackupLine = 64 << 20

// Rollback restores a backup written by Apply, newest line first, only
// for keys that still hold what the migration wrote: such a key is
// deleted if it holds those bytes (VDEL) and its old bytes set if it is
// still absent (SET NX). Other keys are counted as Kept.
func Rollback(ctx context.Context, c *runtime.Client, backup io.Reader) (RollbackResult, error) {
	var res RollbackResult
	var lines []BackupLine
	sc := bufio.NewScanner(backup)
	sc.Buffer(make([]byte, 0, 64<<10), maxBackupLine)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l BackupLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || len(l.Key) == 0 {
			return res, fmt.Errorf("migrate: backup line %d is not a backup entry", n)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if seen[string(l.Key)] {
			continue
		}
		deleted, _, err := c.VDel(ctx, l.Key, l.New, runtime.DelOptions{})
		switch {
		case errors.Is(err, runtime.ErrConditionNotMet), err == nil && !deleted:
			// An older line of this key may be the write that landed
			// (an attempt whose VDEL failed also left a line).
			continue
		case err != nil:
			return res, err
		}
		seen[string(l.Key)] = true
		_, err = c.Set(ctx, l.Key, l.Old, runtime.SetOptions{Condition: runtime.IfNotExists})
		switch {
		case errors.Is(err, runtime.ErrConditionNotMet):
			res.Kept++ // a writer wrote in between: its value stays
		case err != nil:
			return res, err
		default:
			res.Restored++
		}
	}
	for _, l := range lines {
		if !seen[string(l.Key)] {
			seen[string(l.Key)] = true
			res.Kept++
		}
	}
	return res, nil
}
