package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/internal/logtext"
)

// The state store's topics.
const (
	// RequestTopic is where clients publish state store requests.
	RequestTopic = protocol.RequestTopic
	// NotifyPrefix starts every notification topic; the service reserves
	// everything under it, so no response may be routed there.
	NotifyPrefix = protocol.NotifyPrefix
)

// userProp is one MQTT user property; both transports convert to and
// from their own type, keeping the order.
type userProp struct{ Key, Value string }

// inbound is a request as either transport received it.
type inbound struct {
	QoS             byte
	Retain          bool
	ResponseTopic   string
	CorrelationData []byte
	User            []userProp
	Payload         []byte
	// Client is the requester's MQTT client id when the transport knows it
	// (embedded); empty when it must come from __srcId (external).
	Client string
	// Authorize, when set, decides a decoded request before the engine
	// sees it: "" allows it, anything else refuses it (answered
	// engine.ErrNotAuthorized) and says why (for logs and the console).
	Authorize func(args [][]byte) string
	// Readable, when set, is the key read rule of the requester: SCAN
	// lists only the keys it allows.
	Readable func(key []byte) bool
	// ReadCost is what Readable costs for a key of n bytes
	// (engine.Request.VisibleCost).
	ReadCost func(n int) int
	// TokenScope is engine.Request.TokenScope.
	TokenScope string
	// Inject, when set, is the chaos rules' decision on a decoded and
	// authorized request (chaos.go).
	Inject func(client string, args [][]byte) *chaosHit
	// Check, when set, judges a SET's value before the engine decides it
	// (Options.WriteCheck); Refuse says a misfit is refused, else only
	// reported (outcome.Schema).
	Check  func(key, value []byte) *WriteProblem
	Refuse bool
	// Transition, when set, is Options.TransitionCheck: for a SET whose
	// value fits, the judge the engine runs on the value it replaces.
	Transition func(key, value []byte) *Transition
	// WaitRoom, when set, is the durable store's wait for room
	// (persist.GroupCommit.WaitRoom), called before a SET that will be
	// kept (aio-persistence, or KeepAll) is decided.
	WaitRoom func()
	KeepAll  bool
}

// action is what a transport must do with a request after the envelope
// rules ran.
type action uint8

const (
	actReply action = iota // publish Reply
	actDrop                // nothing can be sent; log Reason
	actKick                // forbidden response topic: disconnect the client if possible, else drop
)

// reply is a response to publish at QoS 1.
type reply struct {
	Topic           string
	CorrelationData []byte
	User            []userProp
	Payload         []byte
}

// outcome is the verdict on one request. Reason is set whenever the
// request was refused (dropped, kicked, or answered 400/505), Err when
// the state store answered -ERR, Why when the authorization rules or the
// engine said what decided that error; all are for logs and observers,
// and all come from where the refusal was decided (an envelope rule, the
// authorization rules, the engine's Result). Args is the decoded request
// (nil when it was not decoded), aliasing the payload.
type outcome struct {
	Action action
	Reason string
	// Err is engine.Result.Err: the -ERR answered, "" when none.
	Err engine.Error
	// Why is engine.Result.Why: what decided Err (the authorization rules
	// that name the client, the fencing tokens compared, a stamp too far
	// ahead); empty when the error says it all.
	Why string
	// Args are the parsed request, verb first (nil when it was refused
	// before parsing or did not parse). They alias the PUBLISH payload,
	// which both transports read into a buffer of its own, so they stay
	// valid as long as the outcome (an answer held for the disk keeps
	// them).
	Args  [][]byte
	Reply reply
	// Wait is engine.Result.Wait: when not 0, Reply may be published only
	// once the journal has settled it (Server.answer).
	Wait uint64
	// Delay, set by a chaos rule, holds the answer this long after that;
	// Chaos says a chaos rule decided the outcome (Reason or Why says which).
	Delay time.Duration
	Chaos bool
	// Schema is what Options.WriteCheck found wrong with a SET's value
	// (refused when Err is a schema violation, else let through).
	Schema *WriteProblem
}

// abandon turns an answer that waited for a change the disk did not take
// into the persistence error: the request changed nothing.
func (o *outcome) abandon() {
	res := engine.Refusal(engine.ErrPersistence, "")
	o.Reply.Payload = res.Payload
	o.Reply.User = []userProp{{protocol.PropStatus, statusOK}, {protocol.PropProtocolVersion, protocol.ProtocolVersion}}
	o.Err, o.Why = res.Err, res.Why
	o.Wait = 0
}

// process applies the envelope rules (docs/wire-protocol.md#what-ssgens-service-chooses) to in and,
// when they pass, runs the request on eng. Rules run in this order: QoS,
// retain flag, Response Topic presence and shape, whether the requester
// (the transport's client id, else __srcId) may publish on its Response
// Topic (protocol.MayBeAnsweredOn: nothing is ever answered into another
// client's level), protocol version (first among those that can be
// answered, as in the official executors: nothing else is trustworthy in
// an unknown version), Correlation Data, then __srcId when the transport
// cannot see the client id.
func process(eng *engine.Engine, in *inbound) outcome {
	if in.QoS != 1 {
		return outcome{Action: actDrop, Reason: "request not at QoS 1"}
	}
	if in.Retain {
		// A retained request would run again for every new subscriber of
		// the request topic (an external-mode service after each restart),
		// over whatever was written since.
		return outcome{Action: actDrop, Reason: "retained request"}
	}
	if in.ResponseTopic == "" {
		return outcome{Action: actDrop, Reason: "no response topic"}
	}
	if why := responseTopicProblem(in.ResponseTopic); why != "" {
		return outcome{Action: actKick, Reason: why}
	}
	client := in.Client
	if client == "" {
		client, _ = lookup(in.User, protocol.PropSourceID)
	}
	// Before anything is answered: not even a 400 or 505 goes into
	// another client's topics. Without a client id (external mode, no
	// __srcId) there is nobody to judge; that request gets its 400 below.
	if client != "" && !protocol.MayBeAnsweredOn(client, in.ResponseTopic) {
		return outcome{Action: actKick, Reason: "response topic is in another client's topic space"}
	}
	r := reply{Topic: in.ResponseTopic, CorrelationData: in.CorrelationData}
	if ver, ok := lookup(in.User, protocol.PropProtocolVersion); ok && !supportedVersion(ver) {
		r.User = []userProp{
			{protocol.PropStatus, statusVersionNotSupported},
			{protocol.PropStatusMessage, protocol.StatusMsgVersionNotSupported},
			{protocol.PropRequestVersion, ver},
			{protocol.PropSupportedMajor, protocol.SupportedMajor},
			{protocol.PropProtocolVersion, protocol.ProtocolVersion},
		}
		r.Payload = resp3.AppendError(nil, protocol.UnsupportedVersionText+ver)
		return outcome{Action: actReply, Reason: "unsupported __protVer " + logtext.Clip(ver, 64), Reply: r}
	}
	if len(in.CorrelationData) == 0 {
		return headerMissing(r, protocol.CorrelationDataName, protocol.StatusMsgCorrelationDataMissing)
	}
	if client == "" {
		return headerMissing(r, protocol.PropSourceID, protocol.StatusMsgSourceIDMissing)
	}

	req := engine.Request{Client: client, Visible: in.Readable, VisibleCost: in.ReadCost, TokenScope: in.TokenScope}
	req.Timestamp, req.HasTimestamp = lookup(in.User, protocol.PropTimestamp)
	req.FencingToken, req.HasFencingToken = lookup(in.User, protocol.PropFencingToken)
	persist, _ := lookup(in.User, protocol.PropPersistence)
	req.Persist = strings.EqualFold(persist, protocol.PersistenceOn)
	var res engine.Result
	var chaos *chaosHit
	var schema *WriteProblem
	args, err := resp3.ParseRequest(in.Payload, nil)
	if err != nil {
		res = engine.Refusal(engine.ErrSyntax, "")
	} else if why := authorize(in, args); why != "" {
		res = engine.Refusal(engine.ErrNotAuthorized, why)
	} else if hit := inject(in, client, args); hit != nil && hit.effect != ChaosDelay {
		if hit.effect != ChaosError {
			act := actDrop
			if hit.effect == ChaosDisconnect {
				act = actKick
			}
			return outcome{Action: act, Reason: hit.why, Args: args, Chaos: true}
		}
		res = engine.Refusal(engine.Error(hit.rule.Error), hit.why)
		chaos = hit
	} else if bad := checkWrite(in, args); bad != nil && in.Refuse {
		res = schemaRefusal(bad)
		schema, chaos = bad, hit
	} else {
		req.Args = args
		if in.WaitRoom != nil && (req.Persist || in.KeepAll) && len(args) > 0 && string(args[0]) == protocol.VerbSet {
			in.WaitRoom()
		}
		if in.Transition != nil && bad == nil {
			res, bad = decideJudged(eng, req, in)
		} else {
			res = eng.Decide(req)
		}
		schema, chaos = bad, hit
	}
	if len(res.Payload) == 0 { // the engine promises otherwise; never send an empty payload
		res = engine.Refusal(engine.ErrSyntax, "")
	}
	r.Payload = res.Payload
	r.User = make([]userProp, 0, 3)
	r.User = append(r.User, userProp{protocol.PropStatus, statusOK})
	if !res.Version.IsZero() {
		r.User = append(r.User, userProp{protocol.PropTimestamp, res.Version.String()})
	}
	r.User = append(r.User, userProp{protocol.PropProtocolVersion, protocol.ProtocolVersion})
	out := outcome{Action: actReply, Reply: r, Args: args, Wait: res.Wait, Err: res.Err, Why: res.Why, Schema: schema}
	if chaos != nil {
		out.Chaos, out.Delay = true, chaos.delay
		if chaos.effect == ChaosDelay {
			out.Why = strings.TrimSuffix(chaos.why+"; "+out.Why, "; ")
		}
	}
	return out
}

var (
	statusOK                  = strconv.Itoa(protocol.StatusOK)
	statusBadRequest          = strconv.Itoa(protocol.StatusBadRequest)
	statusVersionNotSupported = strconv.Itoa(protocol.StatusVersionNotSupported)
)

func authorize(in *inbound, args [][]byte) string {
	if in.Authorize == nil {
		return ""
	}
	return in.Authorize(args)
}

func headerMissing(r reply, name, msg string) outcome {
	r.User = []userProp{
		{protocol.PropStatus, statusBadRequest},
		{protocol.PropStatusMessage, msg},
		{protocol.PropPropertyName, name},
		{protocol.PropProtocolVersion, protocol.ProtocolVersion},
	}
	r.Payload = resp3.AppendError(nil, msg)
	return outcome{Action: actReply, Reason: msg, Reply: r}
}

// lookup returns the first value of the user property key.
func lookup(props []userProp, key string) (string, bool) {
	for _, p := range props {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// supportedVersion reports whether a __protVer has major version 1. An
// empty value counts as absent, which means 1.0.
func supportedVersion(v string) bool {
	if v == "" {
		return true
	}
	major, _, _ := strings.Cut(v, ".")
	return major == protocol.SupportedMajor
}

// responseTopicProblem says why topic may not be used as a Response Topic,
// or returns "" when it may.
func responseTopicProblem(topic string) string {
	switch {
	case topic == RequestTopic:
		return "response topic is the request topic"
	case strings.HasPrefix(topic, NotifyPrefix):
		return "response topic is in the service's notification space"
	case strings.HasPrefix(topic, "$"):
		// No client may publish there ($SYS is the broker's); the service's
		// own client is not checked, so it must not be made to.
		return "response topic starts with $"
	case strings.ContainsAny(topic, "+#"):
		return "response topic has a wildcard"
	case strings.ContainsRune(topic, 0):
		return "response topic has a NUL character"
	case strings.HasPrefix(topic, "/") || strings.HasSuffix(topic, "/") || strings.Contains(topic, "//"):
		return "response topic has an empty level"
	}
	return ""
}

// NotifyTopic is the topic of the notifications for key sent to clientID:
// both parts as upper-case hex.
func NotifyTopic(clientID string, key []byte) string { return protocol.NotifyTopic(clientID, key) }

// notificationProps are the user properties of a notification.
func notificationProps(n engine.Notification) []userProp {
	return []userProp{{protocol.PropTimestamp, n.Version.String()}}
}
