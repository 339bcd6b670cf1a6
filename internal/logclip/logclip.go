// Package logclip bounds what one log line can hold: a slog.Handler that
// cuts every string value (attribute values, error texts, the message) to
// a bound before the handler it wraps sees it. Client ids, keys, reasons
// and error texts come from clients and may be 64 KiB each; without a
// bound a client could fill a disk through the logs of its refusals.
package logclip

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"unicode/utf8"
)

// DefaultMax is the bound of New when max is 0: 1 KiB per value.
const DefaultMax = 1024

// New returns h with every string value of a record cut to max bytes
// (DefaultMax when max <= 0), at a character boundary, marked
// "…(N bytes)". Records with nothing to cut pass through unchanged.
func New(h slog.Handler, max int) slog.Handler {
	if max <= 0 {
		max = DefaultMax
	}
	if c, ok := h.(handler); ok && c.max <= max {
		return c
	}
	return handler{h: h, max: max}
}

// Logger is slog.New(New(l.Handler(), max)).
func Logger(l *slog.Logger, max int) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return slog.New(New(l.Handler(), max))
}

type handler struct {
	h   slog.Handler
	max int
}

func (c handler) Enabled(ctx context.Context, l slog.Level) bool { return c.h.Enabled(ctx, l) }

func (c handler) Handle(ctx context.Context, r slog.Record) error {
	long := len(r.Message) > c.max
	r.Attrs(func(a slog.Attr) bool {
		long = long || c.tooLong(a)
		return !long
	})
	if !long {
		return c.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, Clip(r.Message, c.max), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(c.attr(a))
		return true
	})
	return c.h.Handle(ctx, out)
}

func (c handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = c.attr(a)
	}
	return handler{h: c.h.WithAttrs(out), max: c.max}
}

func (c handler) WithGroup(name string) slog.Handler {
	return handler{h: c.h.WithGroup(Clip(name, c.max)), max: c.max}
}

// text is the text a handler would write for v when it is not a plain
// scalar: an error's message, a Stringer's string, bytes; ok is false for
// the kinds kept as they are.
func text(v slog.Value) (string, bool) {
	switch v.Kind() {
	case slog.KindString:
		return v.String(), true
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return x.Error(), true
		case fmt.Stringer:
			return x.String(), true
		case []byte:
			return string(x), true
		case string:
			return x, true
		}
	}
	return "", false
}

func (c handler) tooLong(a slog.Attr) bool {
	if len(a.Key) > c.max {
		return true
	}
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			if c.tooLong(g) {
				return true
			}
		}
		return false
	}
	s, ok := text(v)
	return ok && len(s) > c.max
}

func (c handler) attr(a slog.Attr) slog.Attr {
	a.Key = Clip(a.Key, c.max)
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		gs := v.Group()
		out := make([]slog.Attr, len(gs))
		for i, g := range gs {
			out[i] = c.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	}
	if s, ok := text(v); ok && len(s) > c.max {
		return slog.String(a.Key, Clip(s, c.max))
	}
	a.Value = v
	return a
}

// Clip is s when it has at most max bytes, else its first max bytes (fewer
// when that would cut a character) followed by "…(N bytes)", N being
// len(s).
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for i := 0; i < utf8.UTFMax && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
