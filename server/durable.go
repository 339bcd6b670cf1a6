package server

import (
	"fmt"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// forceDirect, set by the package's tests (SSGEN_TEST_DIRECT), runs
// every data directory with DirectCommits.
var forceDirect bool

// openDisk opens the durable store of Options.DataDir, if any, and wires
// it into cfg as the engine's journal (a group commit).
func (s *Server) openDisk(cfg *engine.Config) error {
	if r := s.opts.Replica; r != nil {
		switch {
		case s.opts.DataDir != "":
			return fmt.Errorf("%w: Replica and DataDir exclude each other", ErrInvalidOptions)
		case s.opts.Broker == "":
			return fmt.Errorf("%w: Replica needs a Broker (servers sharing a replica share a broker)", ErrInvalidOptions)
		}
		s.commit = persist.NewBackendCommit(r, r.Limits(), s.log, s.opts.Limits.maxInflight(), s.opts.OnCommit)
		cfg.PersistAll, cfg.JournalWatches = true, true
		cfg.Journal = s.commit
		return nil
	}
	if s.opts.DataDir == "" {
		if s.opts.Repair {
			return fmt.Errorf("%w: Repair needs a DataDir", ErrInvalidOptions)
		}
		if s.opts.DirectCommits {
			return fmt.Errorf("%w: DirectCommits needs a DataDir", ErrInvalidOptions)
		}
		return nil
	}
	d, err := persist.Open(s.opts.DataDir, persist.Options{Repair: s.opts.Repair, Direct: s.opts.DirectCommits || forceDirect, Log: s.log, Now: s.opts.Now})
	if err != nil {
		return err
	}
	s.disk = d
	s.commit = persist.NewGroupCommit(d, s.log, s.opts.Limits.maxInflight(), s.opts.OnCommit)
	cfg.PersistAll = s.opts.PersistAll
	cfg.MaxKeptKeyBytes = persist.MaxKeyBytes
	cfg.Journal = s.commit
	return nil
}

// Replica is a durable store outside the process that several servers
// share, one serving at a time (Options.Replica): its Commit takes the
// engine's changes in groups, each within Limits.
type Replica interface {
	persist.Backend
	Limits() persist.BackendLimits
	// Load restores the engine, which has not served yet, from the
	// replica (engine.Restore, engine.RestoreWatch).
	Load(eng *engine.Engine) error
}

// restore loads the durable keys (verified by openDisk) into the engine
// before it serves, and deletes the records of keys that expired while
// the service was down.
func (s *Server) restore() error {
	if s.opts.Replica != nil {
		s.commit.SetEngine(s.eng)
		if err := s.opts.Replica.Load(s.eng); err != nil {
			return err
		}
		s.log.Info("state store restored from its replica", "keys", s.eng.Len(), "watches", s.eng.WatchCount())
		return nil
	}
	if s.disk == nil {
		return nil
	}
	s.commit.SetEngine(s.eng)
	var expired []string
	s.eng.Reserve(s.disk.Count())
	n, err := s.disk.RestoreInto(func(recs []engine.Record) {
		expired = append(expired, s.eng.Restore(recs, s.disk.Floor())...)
	})
	if err != nil {
		return err
	}
	if err := s.disk.DeleteKeys(expired); err != nil {
		// Not fatal: the records keep their passed deadlines, so the next
		// start drops them again.
		s.log.Warn("expired records not deleted", "keys", len(expired), "err", err)
	}
	s.log.Info("state store restored", "dir", s.opts.DataDir, "keys", n-len(expired), "expired", len(expired))
	return nil
}

// answer publishes out with send: at once when it waits for nothing, else
// once the changes it depends on are durable, in the engine's order, or
// as the persistence error when they could not be made so. owner is the
// requester, whose answers waiting for the disk are bounded (Limits'
// MaxInflight, the same bound as its unacknowledged requests).
func (s *Server) answer(owner string, out outcome, send func(*outcome)) {
	if out.Wait == 0 {
		send(&out)
		return
	}
	s.commit.Hold(owner, out.Wait, func(err error) {
		if err != nil {
			out.abandon()
		} else if s.notes != nil {
			// On a replica, the change's notifications go out first.
			s.notes.await(out.Wait)
		}
		send(&out)
	})
}

// note is a notification in its watcher's queue; counted tells
// noteOrder when it is out.
type note struct {
	engine.Notification
	counted bool
}

// deliver hands a notification to the transport once the change it
// reports is durable, and drops it when that change was undone.
func (s *Server) deliver(q note) {
	n := q.Notification
	if n.Wait != 0 && s.commit.Wait(n.Wait) != nil {
		s.tr.drop(n)
	} else {
		if s.deliverHook != nil {
			s.deliverHook(n)
		}
		s.tr.deliver(n)
	}
	if q.counted {
		s.notes.done(n.Wait)
	}
}

// closeDisk waits for the group commit to settle everything appended,
// then closes the file.
func (s *Server) closeDisk() error {
	if s.opts.Replica != nil {
		s.commit.Close()
		return nil
	}
	if s.disk == nil {
		return nil
	}
	s.commit.Close()
	return s.disk.Close()
}
