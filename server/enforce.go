package server

import (
	"bytes"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/internal/logtext"
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

// warnMisfit logs a write applied although it does not fit the schema
// (EnforceWarn).
func (s *Server) warnMisfit(client string, p *WriteProblem) {
	s.log.Warn("write does not fit the schema (--enforce warn: applied)", "client", client,
		"declaration", p.Declaration, "path", logtext.Clip(p.Path, 200), "reason", p.Reason, "error", logtext.Clip(p.Msg, 400))
}

// checkWrite runs in.Check on a SET; nil when there is no check or the
// request is no SET.
func checkWrite(in *inbound, args [][]byte) *WriteProblem {
	if in.Check == nil || len(args) < 3 || string(args[0]) != protocol.VerbSet {
		return nil
	}
	return in.Check(args[1], args[2])
}

// Transition judges one SET against the value it replaces
// (Options.TransitionCheck).
type Transition struct {
	// Declaration is the declaration of the key, named in the problem
	// the server reports when Judge could not judge (Reason "busy").
	Declaration string
	// Judge runs inside the engine's critical section with the key's
	// current value and its version: nil when the write keeps the rules.
	// Its cost must not grow with len(old): known is false when it cannot
	// judge old without reading more than a bounded part of it; the
	// server then calls Learn outside the critical section and asks again.
	Judge func(old []byte, version hlc.HLC) (p *WriteProblem, known bool)
	// Learn reads old, the key's value at version, outside the critical
	// section, so that Judge knows it when asked again. old is never
	// modified.
	Learn func(old []byte, version hlc.HLC)
	// Stored, when set, is told outside the critical section that the
	// SET was applied: its value is now the key's at version (so that
	// Judge, when a later SET replaces it, knows it).
	Stored func(version hlc.HLC)
}

// setApplied is the answer of an applied SET.
var setApplied = resp3.AppendOK(nil)

// transitionTries is how often a SET is decided while Judge does not
// know the value it replaces (each time another writer replaced it
// between Learn and the next try). After the last, the SET is judged a
// problem with Reason "busy": refused under EnforceRefuse, reported and
// applied under EnforceWarn.
const transitionTries = 3

// errTransitionRetry refuses a SET whose judge needs the value it
// replaces read outside the engine's lock; never sent to a client.
const errTransitionRetry engine.Error = "internal: transition judge needs the old value"

// transitionChecker is Options.TransitionCheck when enforcement is on,
// else nil.
func (s *Server) transitionChecker() func(key, value []byte) *Transition {
	if s.opts.Enforce == EnforceOff {
		return nil
	}
	return s.opts.TransitionCheck
}

// decideJudged runs req on eng with the transition judge of in (a SET
// whose value fits, with Options.TransitionCheck set): what the judge
// found is returned with the result, which carries its description when
// it refused. When the judge needs the value replaced read first, that
// is done outside the engine's lock and the SET decided again (at most
// transitionTries times). Apart from process so that a server without
// the check allocates nothing for it.
func decideJudged(eng *engine.Engine, req engine.Request, in *inbound) (engine.Result, *WriteProblem) {
	args := req.Args
	if len(args) < 3 || string(args[0]) != protocol.VerbSet {
		return eng.Decide(req), nil
	}
	tr := in.Transition(args[1], args[2])
	if tr == nil {
		return eng.Decide(req), nil
	}
	refuse := in.Refuse
	for try := 1; ; try++ {
		var found *WriteProblem
		var unknown bool
		var old0 []byte
		var old0Version hlc.HLC
		last := try == transitionTries
		req.Transition = func(old []byte, version hlc.HLC) engine.Error {
			p, known := tr.Judge(old, version)
			if !known {
				if !last {
					unknown, old0, old0Version = true, old, version
					return errTransitionRetry
				}
				p = &WriteProblem{Declaration: tr.Declaration, Reason: "busy",
					Msg: "the value replaced kept changing while it was read; retry the write"}
			}
			if p == nil {
				return ""
			}
			found = p
			if refuse {
				return engine.Error(protocol.SchemaViolation(p.Declaration, p.Path, p.Msg))
			}
			return ""
		}
		res := eng.Decide(req)
		if unknown {
			tr.Learn(old0, old0Version) // outside the engine's lock
			continue
		}
		if found != nil && res.Err != "" && refuse {
			res.Why = found.describe()
		}
		if tr.Stored != nil && res.Err == "" && bytes.Equal(res.Payload, setApplied) {
			tr.Stored(res.Version)
		}
		return res, found
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
