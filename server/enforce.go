package server

import (
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/engine"
)

// Enforce is what the server does with a write that does not fit the
// schema (Options.Enforce).
type Enforce uint8

const (
	// EnforceOff looks at no write.
	EnforceOff Enforce = iota
	// EnforceWarn lets a misfit write through and logs a warning.
	EnforceWarn
	// EnforceRefuse answers a misfit write with an -ERR that names the
	// declaration and field path (protocol.SchemaViolation) and does not
	// apply it.
	EnforceRefuse
)

// ParseEnforce reads "off", "warn" or "refuse".
func ParseEnforce(s string) (Enforce, bool) {
	switch s {
	case "off", "":
		return EnforceOff, true
	case "warn":
		return EnforceWarn, true
	case "refuse":
		return EnforceRefuse, true
	}
	return EnforceOff, false
}

// WriteProblem is what Options.WriteCheck found wrong with a written
// value.
type WriteProblem struct {
	// Declaration is the key declaration the key matched (its pattern).
	Declaration string
	// Path locates the part of the value at fault, empty for the whole
	// value (".mode", ".zones[\"a\"]").
	Path string
	// Reason is a short word for metrics: "decode" for a value that does
	// not decode as the declared type, "immutable" or "monotonic" for a
	// write that breaks a transition rule.
	Reason string
	// Msg says what is wrong, for a person.
	Msg string
}

// writeChecker is the check process runs on a SET: nil when enforcement
// is off, so a server without it pays one nil comparison.
func (s *Server) writeChecker() func(key, value []byte) *WriteProblem {
	if s.opts.Enforce == EnforceOff {
		return nil
	}
	return s.opts.WriteCheck
}

// checkWrite runs in.Check on a SET; nil when there is no check or the
// request is no SET.
func checkWrite(in *inbound, args [][]byte) *WriteProblem {
	if in.Check == nil || len(args) < 3 || string(args[0]) != protocol.VerbSet {
		return nil
	}
	return in.Check(args[1], args[2])
}

// transitionChecker is Options.TransitionCheck when enforcement is on,
// else nil.
func (s *Server) transitionChecker() func(key, value []byte) func(old []byte) *WriteProblem {
	if s.opts.Enforce == EnforceOff {
		return nil
	}
	return s.opts.TransitionCheck
}

// decideJudged runs req on eng with the transition judge of in (a SET
// whose value fits, with Options.TransitionCheck set): what the judge
// found is returned with the result, which carries its description when
// it refused. Apart from process so that a server without the check
// allocates nothing for it.
func decideJudged(eng *engine.Engine, req engine.Request, in *inbound) (engine.Result, *WriteProblem) {
	var found *WriteProblem
	req.Transition = transitionJudge(in, req.Args, &found)
	res := eng.Decide(req)
	if found != nil && res.Err != "" && in.Refuse {
		res.Why = found.describe()
	}
	return res, found
}

// transitionJudge is the engine's Request.Transition for a SET whose key
// has transition rules, nil otherwise: it records what it finds in
// *found, and refuses with the schema violation when in.Refuse.
func transitionJudge(in *inbound, args [][]byte, found **WriteProblem) func(old []byte) engine.Error {
	if in.Transition == nil || len(args) < 3 || string(args[0]) != protocol.VerbSet {
		return nil
	}
	judge := in.Transition(args[1], args[2])
	if judge == nil {
		return nil
	}
	refuse := in.Refuse
	return func(old []byte) engine.Error {
		p := judge(old)
		if p == nil {
			return ""
		}
		*found = p
		if refuse {
			return engine.Error(protocol.SchemaViolation(p.Declaration, p.Path, p.Msg))
		}
		return ""
	}
}

// schemaRefusal is the answer to a write refused by the schema.
func schemaRefusal(p *WriteProblem) engine.Result {
	return engine.Refusal(engine.Error(protocol.SchemaViolation(p.Declaration, p.Path, p.Msg)), p.describe())
}

// describe says what is wrong, for logs and the trace: bounded, as the
// answer's text is.
func (p *WriteProblem) describe() string {
	return "schema " + p.Reason + ": " + protocol.SchemaViolation(p.Declaration, p.Path, p.Msg)[len(protocol.SchemaViolationPrefix):]
}
