package server

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
