package persist

import (
	"context"
	"time"
)

// settlePoll is how often Settle looks whether the commit settled.
const settlePoll = 5 * time.Millisecond

// Settle waits until nothing appended is left to commit and every answer
// held so far has been released (published, or answered with the
// persistence error), or until ctx ends; it reports whether the commit
// settled. Writes appended meanwhile are waited for too. A server that
// stops serving (a replica's leader stepping down) calls it before it
// leaves the broker, so held answers are not lost with the connection.
func (c *GroupCommit) Settle(ctx context.Context) bool {
	t := time.NewTicker(settlePoll)
	defer t.Stop()
	for {
		c.mu.Lock()
		done := len(c.queue) == 0 && len(c.held) == 0 && len(c.outcomes) == 0 && !c.draining
		c.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
