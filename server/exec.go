package server

import (
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// ExecRequest is a request a tool makes on the store in its own name
// (Server.Exec): the web console's set and delete.
type ExecRequest struct {
	// Client names the requester in the trace and KEYNOTIFY registrations.
	Client string
	// Args is the command, verb first, as a client would send it.
	Args [][]byte
	// FencingToken is sent as __ft when not empty.
	FencingToken string
	// Persist asks that a SET's key be kept on disk (aio-persistence).
	Persist bool
}

// Exec runs one request on the engine as a client's would run, stamped
// with the engine's own clock, checked against the schema as a client's
// SET is (Options.Enforce), and tells Options.OnRequest of it. It checks
// no authorization: the caller decides who may do what.
func (s *Server) Exec(r ExecRequest) engine.Result {
	start := time.Now()
	now := start
	if s.opts.Now != nil {
		now = s.opts.Now()
	}
	ts := hlc.HLC{Wall: uint64(max(now.UnixMilli(), 0)), Node: "console"}
	req := engine.Request{
		Args: r.Args, Client: r.Client, Persist: r.Persist,
		HasTimestamp: true, Timestamp: ts.String(),
	}
	if r.FencingToken != "" {
		req.HasFencingToken, req.FencingToken = true, r.FencingToken
	}
	// The schema's checks (Options.Enforce), as for a client's SET.
	in := inbound{Check: s.writeChecker(), Transition: s.transitionChecker(), Refuse: s.opts.Enforce == EnforceRefuse}
	var res engine.Result
	bad := checkWrite(&in, r.Args)
	switch {
	case bad != nil && in.Refuse:
		res = schemaRefusal(bad)
	case in.Transition != nil && bad == nil:
		res, bad = decideJudged(s.eng, req, &in)
		res = s.eng.Settle(res)
	default:
		res = s.eng.Handle(req)
	}
	if bad != nil && !in.Refuse {
		s.warnMisfit(r.Client, bad)
	}
	if s.observing() {
		out := outcome{Action: actReply, Args: r.Args, Err: res.Err, Why: res.Why, Reply: reply{Payload: res.Payload}, Schema: bad}
		if !res.Version.IsZero() {
			out.Reply.User = []userProp{{protocol.PropTimestamp, res.Version.String()}}
		}
		s.observeEvent(start, r.Client, &out, true)
	}
	return res
}
