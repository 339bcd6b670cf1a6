package server

import (
	"fmt"
	"time"

	"github.com/ssgen/ssgen/server/engine"
)

// openDisk opens the durable store of Options.DataDir, if any, and wires
// it into cfg as the engine's persistence hook.
func (s *Server) openDisk(cfg *engine.Config) error {
	if s.opts.DataDir == "" {
		if s.opts.Repair {
			return fmt.Errorf("%w: Repair needs a DataDir", ErrInvalidOptions)
		}
		return nil
	}
	d, err := openStore(s.opts.DataDir, storeOptions{repair: s.opts.Repair, log: s.log, now: s.opts.Now})
	if err != nil {
		return err
	}
	s.disk = d
	cfg.PersistAll = s.opts.PersistAll
	cfg.Persist = func(changes []engine.Change) error {
		start := time.Now()
		err := d.apply(changes)
		s.committed(start, len(changes), err)
		if err != nil {
			// The client only sees the engine's fixed message; the cause
			// belongs in the log.
			s.log.Error("state store change not persisted", "keys", len(changes), "err", err)
		}
		return err
	}
	return nil
}

// restore loads the durable keys (read and verified by openDisk) into the
// engine before it serves, and deletes the records of keys that expired
// while the service was down.
func (s *Server) restore() error {
	if s.disk == nil {
		return nil
	}
	recs, floor := s.disk.takeLoaded()
	expired := s.eng.Restore(recs, floor)
	if err := s.disk.deleteKeys(expired); err != nil {
		// Not fatal: the records keep their passed deadlines, so the next
		// start drops them again.
		s.log.Warn("expired records not deleted", "keys", len(expired), "err", err)
	}
	s.log.Info("state store restored", "dir", s.opts.DataDir, "keys", len(recs)-len(expired), "expired", len(expired))
	return nil
}

func (s *Server) closeDisk() error {
	if s.disk == nil {
		return nil
	}
	return s.disk.close()
}

// committed tells Options.OnCommit of one commit of the durable store
// that started at start and carried n changes. Whatever shape commits
// take (one per write, or one per group of writes), it is called once per
// bbolt transaction, when that transaction is durable or has failed.
func (s *Server) committed(start time.Time, n int, err error) {
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(CommitEvent{Duration: time.Since(start), Changes: n, Err: err})
	}
}
