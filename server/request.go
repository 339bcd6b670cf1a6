package server

import (
	"time"
)

// serve is the request path both transports share, from a received
// request to its answer. build makes the inbound of the transport's
// packet; a reason it returns drops the request without processing it
// (an external-mode __srcId reserved for the service's tools). serve then
// runs the envelope rules and the engine (process), tells
// Options.OnRequest of the request, and carries out the verdict: a drop
// is logged; a kick is logged and handed to kick, which disconnects the
// client (nil when the transport cannot: the request is dropped; chaos
// says a chaos rule asked for it); an answer is logged when refused and
// published with respond, at once or, when it waits for the disk or a
// chaos rule delays it, once the disk has settled it and the delay has
// passed (held is then true, and respond may run on another goroutine). client names the requester
// in logs and observations (the embedded broker's client id, else
// __srcId). It returns the verdict's action and whether the answer was
// held.
func (s *Server) serve(client string, build func() (inbound, string), kick func(chaos bool), respond func(out outcome, held bool)) (act action, held bool) {
	var start time.Time
	if s.observing() {
		start = time.Now()
	}
	in, reason := build()
	var out outcome
	if reason != "" {
		out = outcome{Action: actDrop, Reason: reason}
	} else {
		in.Inject = s.injector()
		if s.commit != nil {
			in.WaitRoom, in.KeepAll = s.commit.WaitRoom, s.opts.PersistAll || s.opts.Replica != nil
		}
		if in.Check = s.writeChecker(); in.Check != nil {
			in.Refuse = s.opts.Enforce == EnforceRefuse
		}
		if in.Transition = s.transitionChecker(); in.Transition != nil {
			in.Refuse = s.opts.Enforce == EnforceRefuse
		}
		out = process(s.eng, &in)
		if out.Schema != nil && !in.Refuse {
			s.warnMisfit(client, out.Schema)
		}
	}
	if s.observing() {
		defer s.observe(start, client, &out)
	}
	switch out.Action {
	case actDrop:
		s.log.Warn("request dropped", "client", client, "reason", out.Reason)
		return actDrop, false
	case actKick:
		switch {
		case out.Chaos && kick == nil:
			s.log.Info("request dropped by a chaos rule (an attached service cannot disconnect a client)",
				"client", client, "reason", out.Reason)
			return actKick, false
		case out.Chaos:
			s.log.Info("client disconnected by a chaos rule", "client", client, "reason", out.Reason)
			kick(true)
			return actKick, false
		case kick == nil:
			s.log.Warn("request dropped: forbidden response topic", "client", client,
				"reason", out.Reason, "response_topic", in.ResponseTopic)
			return actKick, false
		}
		s.log.Warn("client disconnected for a forbidden response topic", "client", client,
			"reason", out.Reason, "response_topic", in.ResponseTopic)
		kick(false)
		return actKick, false
	}
	if out.Wait == 0 && out.Delay == 0 {
		logAnswer(s.log, client, &out)
		respond(out, false)
		return actReply, false
	}
	s.answer(client, out, func(out *outcome) {
		logAnswer(s.log, client, out)
		if out.Delay > 0 { // held by a chaos rule
			o := *out
			if s.delayed.after(client, o.Delay, func() { respond(o, true) }) {
				return
			}
			s.log.Warn("chaos delay not applied: too many answers held, answered at once", "client", client,
				"per_client", MaxHeldAnswersPerClient, "server", MaxHeldAnswers)
		}
		respond(*out, true)
	})
	return actReply, true
}
