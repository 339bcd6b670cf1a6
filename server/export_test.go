package server

import "github.com/ssgen/ssgen/server/engine"

// SetCommitHook makes hook run before each group commit of s's data file
// (tests): it may block, and its error fails the transaction.
func SetCommitHook(s *Server, hook func() error) {
	s.commit.SetHook(hook)
}

// PolicyWork says how many times p resolved an identity's grants, and the
// principal glob matching it has done in all (glob.Pattern.Cost units).
func PolicyWork(p *Policy) (resolves, work int64) {
	return p.Work()
}

// SetHeldAnswerBounds sets the bounds of the answers chaos delay rules
// hold (MaxHeldAnswersPerClient, MaxHeldAnswers) for a test, and
// HeldAnswers tells how many are held.
func SetHeldAnswerBounds(s *Server, perClient, total int) {
	s.delayed.mu.Lock()
	defer s.delayed.mu.Unlock()
	s.delayed.perClient, s.delayed.total = perClient, total
}

func HeldAnswers(s *Server) int { return s.delayed.count() }

// SetAttachedHook makes hook run each time s, in external mode, has
// attached to the broker and subscribed to requests (tests; before Start).
func SetAttachedHook(s *Server, hook func()) {
	s.tr.(*external).attached = hook
}

// SetDeliverHook makes hook run before each notification of s is handed
// to the broker (tests; before Start).
func SetDeliverHook(s *Server, hook func(engine.Notification)) {
	s.deliverHook = hook
}

// ExternalDropped is how many requests s, in external mode, dropped
// because too many were waiting.
func ExternalDropped(s *Server) int64 { return s.tr.(*external).dropped.Load() }
