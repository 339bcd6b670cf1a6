package server

import "context"

// SettleAnswers waits until every answer that waits for the durable store
// (Options.Replica or DataDir) has been published, as the changes' success
// or as the persistence error, or until ctx ends; it reports whether they
// all were. A replica's leader that steps down calls it before Close, so
// that requests whose changes failed get their -ERR instead of a timeout.
// Without a durable store it returns true at once.
func (s *Server) SettleAnswers(ctx context.Context) bool {
	if s.commit == nil {
		return true
	}
	return s.commit.Settle(ctx)
}
