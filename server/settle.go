package server

import (
	"context"

	"github.com/eclipse/paho.golang/paho"
)

// Drain stops taking requests (attached to a broker: it unsubscribes from
// the request topic, so the broker sends them elsewhere or answers "no
// matching subscribers"), then waits until every answer that waits for
// the durable store (Options.Replica or DataDir) has been published, as
// the changes' success or as the persistence error, or until ctx ends; it
// reports whether they all were. Requests received before still get their
// answers. A replica's leader that steps down calls it before Close, so
// that requests whose changes failed get their -ERR instead of a timeout.
// Only Close may follow.
func (s *Server) Drain(ctx context.Context) bool {
	if x, ok := s.tr.(*external); ok {
		x.unsubscribe(ctx)
	}
	if s.commit == nil {
		return true
	}
	return s.commit.Settle(ctx)
}

// unsubscribe stops the broker sending requests to this server; failures
// are logged (the server is about to close anyway).
func (x *external) unsubscribe(ctx context.Context) {
	c := x.cur.Load()
	if c == nil {
		return
	}
	if _, err := c.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{RequestTopic}}); err != nil {
		x.s.log.Warn("request topic not unsubscribed", "error", err)
	}
}
