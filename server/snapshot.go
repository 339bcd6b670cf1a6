package server

import (
	"errors"
	"fmt"
	"io"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/snapshot"
)

// WriteSnapshot writes the whole store to w as a snapshot file (package
// snapshot; docs/snapshots.md): every key with its value, version, fencing
// token, time left to live and durability, and the clock. It is safe
// while the server serves: the keys are taken at one instant under the
// engine's lock (values shared, not copied), then encoded and written
// without holding it, so requests wait only for the taking.
func (s *Server) WriteSnapshot(w io.Writer) error {
	return snapshot.Write(w, s.eng.Export(nil))
}

// ReadSnapshot loads a snapshot file from r, all or nothing: the file is
// read and checked to its end (snapshot.Read), then every key against the
// server's limits and quotas and the mode (engine.Import), and the first
// problem is returned, changing nothing. A problem of the file wraps
// snapshot.ErrInvalid, with an *engine.ItemError naming the entry when it
// is one key's; the others are engine.ErrNotEmpty, errors wrapping
// engine.ErrQuotaExceeded (an item also as an *engine.ItemError), and
// engine.ErrPersistence. It is safe while the server serves, and watchers
// of the keys it changes are notified; it holds the engine's lock while it
// checks the result and applies it. Call it between New and Start to start
// from a snapshot (`ssgen serve --seed`).
func (s *Server) ReadSnapshot(r io.Reader, mode engine.ImportMode) (engine.ImportResult, error) {
	return s.readSnapshot(r, engine.ImportOptions{Mode: mode})
}

func (s *Server) readSnapshot(r io.Reader, opts engine.ImportOptions) (engine.ImportResult, error) {
	if opts.Mode == engine.ImportEmpty && s.eng.Len() > 0 {
		// Before reading the file; Import checks again under the lock.
		return engine.ImportResult{}, engine.ErrNotEmpty
	}
	snap, err := snapshot.Read(r, snapshot.Limits{MaxKeys: s.opts.MaxKeys, MaxBytes: s.opts.MaxBytes})
	if err != nil {
		return engine.ImportResult{}, err
	}
	res, err := s.eng.Import(snap, opts)
	if err != nil {
		if !errors.Is(err, engine.ErrQuotaExceeded) && !errors.Is(err, engine.ErrNotAuthorized) &&
			!errors.Is(err, engine.ErrNotEmpty) && !errors.Is(err, engine.ErrPersistence) {
			// A problem of the file, like those snapshot.Read finds: an
			// item's, or its clock too far ahead.
			err = fmt.Errorf("%w: %w", snapshot.ErrInvalid, err)
		}
		return res, err
	}
	s.log.Info("snapshot loaded", "mode", opts.Mode.String(), "keys", res.Stored, "deleted", res.Deleted)
	return res, nil
}
