package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/internal/logtext"
)

// logAnswer reports a refused request: one the envelope rules refused
// (400, 505) as a warning, the client is broken; one the state store
// answered -ERR at debug level with its client, verb, key, error and
// reason: a stale fencing token or a full quota is ordinary traffic.
func logAnswer(log *slog.Logger, client string, out *outcome) {
	switch {
	case out.Reason != "":
		log.Warn("request refused", "client", client, "reason", out.Reason)
	case out.Err != "":
		ctx := context.Background()
		if !log.Enabled(ctx, slog.LevelDebug) {
			return
		}
		attrs := make([]slog.Attr, 0, 6)
		attrs = append(attrs, slog.String("client", client))
		if len(out.Args) > 0 {
			attrs = append(attrs, slog.String("verb", logtext.Bytes(out.Args[0], 32)))
		}
		if len(out.Args) > 1 {
			name := "key"
			if string(out.Args[0]) == protocol.VerbScan {
				name = "pattern"
			}
			attrs = append(attrs, slog.String(name, logtext.Bytes(out.Args[1], 200)))
		}
		attrs = append(attrs, slog.String("error", string(out.Err)), slog.String("reason", out.Err.Class()))
		if out.Why != "" {
			attrs = append(attrs, slog.String("detail", out.Why))
		}
		log.LogAttrs(ctx, slog.LevelDebug, "request refused", attrs...)
	}
}

// mochiLog is the embedded broker's logger: it maps mochi's records to
// the service's levels and words. The service reports connections and
// refusals itself, so mochi's chatter goes down a level or two:
//
//   - Info and Debug (hooks added, listener attached, started, stopped,
//     client disconnected, session taken over) become Debug;
//   - the empty-message record mochi's listener writes for every
//     connection that ends with an error becomes "connection ended", at
//     Debug when the end was ordinary (EOF, reset, closed, timed out, a
//     normal DISCONNECT, a refusal the service has logged already: bad
//     credentials, an authorization refusal, over a limit, server busy or shutting
//     down, session taken over) and Info otherwise (a protocol violation
//     or malformed packet from the client, a TLS failure);
//   - "error processing packet" (a client's bad packet) becomes Info, and
//     the keepalive advice (a client asking for a short or no keepalive)
//     Debug;
//   - other warnings and errors (a client's queue or packet ids
//     exhausted) keep their level.
//
// A packet attribute is reduced to the packet's type: mochi would print
// the whole packet, payload included.
type mochiLog struct{ h slog.Handler }

func (m mochiLog) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn {
		return m.h.Enabled(ctx, slog.LevelDebug)
	}
	return m.h.Enabled(ctx, l) // lowered, maybe; never raised
}

func (m mochiLog) Handle(ctx context.Context, r slog.Record) error {
	level, msg := mochiLevel(r)
	if !m.h.Enabled(ctx, level) {
		return nil
	}
	out := slog.NewRecord(r.Time, level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if pk, ok := a.Value.Any().(packets.Packet); ok {
			a = slog.String(a.Key, packets.PacketNames[pk.FixedHeader.Type])
		}
		out.AddAttrs(a)
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m mochiLog) WithAttrs(a []slog.Attr) slog.Handler { return mochiLog{m.h.WithAttrs(a)} }
func (m mochiLog) WithGroup(name string) slog.Handler   { return mochiLog{m.h.WithGroup(name)} }

// mochiLevel is the level and message of a mochi record (see mochiLog).
func mochiLevel(r slog.Record) (slog.Level, string) {
	switch {
	case r.Level < slog.LevelWarn:
		return slog.LevelDebug, r.Message
	case r.Message == "":
		var err error
		r.Attrs(func(a slog.Attr) bool {
			if e, ok := a.Value.Any().(error); ok && a.Key == "error" {
				err = e
				return false
			}
			return true
		})
		if ordinaryEnd(err) {
			return slog.LevelDebug, "connection ended"
		}
		return slog.LevelInfo, "connection ended"
	case r.Message == "error processing packet":
		return slog.LevelInfo, r.Message
	case r.Message == mqtt.ErrMinimumKeepalive.Error():
		return slog.LevelDebug, r.Message
	}
	return r.Level, r.Message
}

// ordinaryEnd reports whether a connection's end needs nobody's attention:
// the client went away, or the service ended it and said so already.
func ordinaryEnd(err error) bool {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var code packets.Code
	if !errors.As(err, &code) {
		return false
	}
	switch code.Code {
	case packets.ErrBadUsernameOrPassword.Code, packets.ErrNotAuthorized.Code, packets.ErrQuotaExceeded.Code,
		packets.ErrServerBusy.Code, packets.ErrServerShuttingDown.Code, packets.ErrKeepAliveTimeout.Code,
		packets.ErrSessionTakenOver.Code:
		return true
	}
	return code.Code < 0x80
}
