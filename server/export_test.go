package server

// SetCommitHook makes hook run before each group commit of s's data file
// (tests): it may block, and its error fails the transaction.
func SetCommitHook(s *Server, hook func() error) {
	s.commit.mu.Lock()
	s.commit.hook = hook
	s.commit.mu.Unlock()
}
