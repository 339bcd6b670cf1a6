package server

import (
	"context"
	"log/slog"
)

// minLevel passes on records at or above level only: mochi logs every
// connection at Info, which the service already reports in its own words.
type minLevel struct {
	h     slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(a), m.level}
}
func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.level} }

// logAnswer reports a request that was answered with a refusal (400, 505:
// a warning, the client is broken) or a state store error (information:
// a failed condition or a stale fencing token is ordinary traffic).
func logAnswer(log *slog.Logger, client string, out *outcome) {
	switch {
	case out.Reason != "":
		log.Warn("request refused", "client", client, "reason", out.Reason)
	case out.StoreError != "":
		log.Info("request failed", "client", client, "error", out.StoreError)
	}
}
