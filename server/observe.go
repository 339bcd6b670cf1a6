package server

import (
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
)

// RequestEvent is one request as Options.OnRequest is told of it, after it
// was answered (or dropped). Its byte slices alias the request and the
// response and are valid only during the call: an observer that keeps
// anything copies it.
type RequestEvent struct {
	// Start is when the service began serving the request; Latency how
	// long until its answer was handed to the broker (or it was dropped).
	Start   time.Time
	Latency time.Duration
	// Client is the requester: its MQTT client id (embedded), its __srcId
	// (external), or the name a tool gave Server.Exec.
	Client string
	// Verb is the command (SET, GET, DEL, VDEL, KEYNOTIFY, SCAN, or what
	// the client sent); empty when the request was not decoded (dropped,
	// refused by an envelope rule, or not a RESP3 array).
	Verb string
	// Key is the command's key (SCAN: its pattern); nil without one.
	Key []byte
	// Status is the __stat answered (200, 400, 505); 0 when nothing was
	// answered (Dropped).
	Status int
	// Payload is the RESP3 response (nil when nothing was answered).
	Payload []byte
	// Version is the __ts answered, zero when none.
	Version string
	// Error is the -ERR text of a 200 answer, or the message of a 400/505.
	Error string
	// Reason says why the request was refused: the envelope rule that
	// dropped it, disconnected its client or answered it 400/505, the
	// authorization rules that did not grant it, or the fencing token or
	// stamp that the engine refused. Empty for requests served.
	Reason string
	// SchemaDeclaration and SchemaReason are set for a SET whose value
	// does not fit its key's declaration (Options.Enforce warn or refuse):
	// the declaration's name and the kind of misfit ("decode"); Reason
	// then says what is wrong, refused or not.
	SchemaDeclaration, SchemaReason string
	// Dropped is true when nothing was answered; Disconnected when the
	// client was also disconnected (a forbidden response topic).
	Dropped, Disconnected bool
	// Exec is true for a request a tool made through Server.Exec (the web
	// console), never for one that came over MQTT, whatever its client id.
	Exec bool
}

// observing reports whether requests are observed: only then is the
// start of each request read from the clock.
func (s *Server) observing() bool { return s.opts.OnRequest != nil }

// observe tells Options.OnRequest of a request that ran through process.
func (s *Server) observe(start time.Time, client string, out *outcome) {
	s.observeEvent(start, client, out, false)
}

func (s *Server) observeEvent(start time.Time, client string, out *outcome, exec bool) {
	ev := RequestEvent{Start: start, Client: client, Reason: out.Reason, Exec: exec}
	if len(out.Args) > 0 {
		ev.Verb = verbName(out.Args[0])
		if len(out.Args) > 1 {
			ev.Key = out.Args[1]
		}
	}
	switch out.Action {
	case actDrop:
		ev.Dropped = true
	case actKick:
		ev.Dropped, ev.Disconnected = true, true
	default:
		ev.Payload = out.Reply.Payload
		ev.Status = protocol.StatusOK
		for _, p := range out.Reply.User {
			switch p.Key {
			case protocol.PropStatus:
				if p.Value != statusOK {
					ev.Status = statusCode(p.Value)
				}
			case protocol.PropTimestamp:
				ev.Version = p.Value
			}
		}
		ev.Error = string(out.Err)
		if ev.Status != protocol.StatusOK {
			ev.Error = out.Reason
		}
		if out.Why != "" {
			ev.Reason = out.Why
		}
		if p := out.Schema; p != nil {
			ev.SchemaDeclaration, ev.SchemaReason = p.Declaration, p.Reason
			if ev.Reason == "" {
				ev.Reason = p.describe() + " (--enforce warn: applied)"
			}
		}
	}
	ev.Latency = time.Since(start)
	s.opts.OnRequest(&ev)
}

func statusCode(v string) int {
	switch v {
	case statusBadRequest:
		return protocol.StatusBadRequest
	case statusVersionNotSupported:
		return protocol.StatusVersionNotSupported
	}
	return 0
}

// verbName returns the verb as one of the constant strings for the
// commands the engine knows (no allocation), else as sent, cut to 32
// bytes.
func verbName(b []byte) string {
	for _, v := range protocol.Verbs {
		if string(b) == v {
			return v
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	return strings.ToValidUTF8(string(b), "?")
}
