package server

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// faultHook injects the faults a client's packets ask for
// (Options.FaultInjection; the vocabulary is in faults.go). It is added
// to the embedded broker only when fault injection is on, after the
// access hook (client ids, wills, retained requests are checked first) and
// before the service (a rejected or disconnected request is never
// decided).
//
// A packet's plan is made once, in OnPacketRead, where the fault:requestid
// memory is consulted: an immediate disconnect happens there, before
// mochi looks at the packet; a reject is carried out by the hook of the
// packet's own processing (OnPublish, OnSubscribe, OnUnsubscribe), which
// runs next in the same read goroutine; a delayed disconnect waits for the
// packet's acknowledgement to be sent (OnPacketSent), or for its
// processing to end when it has none (QoS 0), and for the answer to a
// state store request (see delayed), and then for its delay.
type faultHook struct {
	mqtt.HookBase
	e *embedded

	mu      sync.Mutex
	seen    [faultKinds]*idMemory
	clients map[*mqtt.Client]*faultClient
	pending int // delayed disconnects waiting, over all clients
	closed  bool
}

// faultClient is the fault state of one connection.
type faultClient struct {
	// cur is the plan of the packet being processed: a reject, for its
	// processing hook.
	cur *faultPlan
	// acks are codes to write into a SUBACK or UNSUBACK being sent.
	acks map[ackKey]byte
	// The delayed disconnects of the connection: every one not yet
	// carried out (waiting); those waiting for their packet's
	// acknowledgement (byAck) or for the answer to their request
	// (byAnswer, by correlation data); those whose delay runs (timers).
	waiting  map[*delayed]struct{}
	byAck    map[ackKey]*delayed
	byAnswer map[string]*delayed
	timers   map[*delayed]*time.Timer
}

// ackKey names an acknowledgement: its packet type and id. A QoS 0
// PUBLISH, which has none, is {Publish, 0}: the end of its processing.
type ackKey struct {
	typ byte
	id  uint16
}

// delayed is a delayed disconnect, and what the trace says of it. Its
// delay starts once the packet is acknowledged and, for a state store
// request whose answer the client will receive, once the answer has been
// written too: the answer travels through the client's outbound queue,
// which a disconnect written at once would overtake.
type delayed struct {
	plan    faultPlan
	kind    faultKind
	request bool
	verb    string
	key     []byte

	ack      ackKey
	acked    bool
	answer   string // the request's correlation data, when its answer is awaited
	answered bool
}

func newFaultHook(e *embedded) *faultHook {
	h := &faultHook{e: e, clients: make(map[*mqtt.Client]*faultClient)}
	for k := range h.seen {
		h.seen[k] = newIDMemory(FaultRequestIDs)
	}
	return h
}

func (h *faultHook) ID() string { return "ssgen-faults" }

func (h *faultHook) Provides(b byte) bool {
	return bytes.Contains([]byte{
		mqtt.OnConnect, mqtt.OnPacketRead, mqtt.OnPublish, mqtt.OnSubscribe, mqtt.OnUnsubscribe,
		mqtt.OnPacketEncode, mqtt.OnPacketSent, mqtt.OnPacketProcessed, mqtt.OnDisconnect,
	}, []byte{b})
}

// plan decides the fault of a packet of kind k, consulting and updating
// the fault:requestid memory, and logs a fault that is ignored.
func (h *faultHook) plan(cl *mqtt.Client, k faultKind, props []packets.UserProperty) faultPlan {
	p := planFault(k, props)
	if p.hasID {
		h.mu.Lock()
		first := h.seen[k].first(p.id)
		h.mu.Unlock()
		if !first {
			if p.action != faultNone {
				h.e.s.log.Info("fault not injected: request id seen before", "client", cl.ID,
					"packet", k.String(), "request_id", clipID(p.id))
			}
			return faultPlan{}
		}
	}
	if p.ignored != "" {
		h.e.s.log.Warn("fault ignored", "client", cl.ID, "packet", k.String(), "reason", p.ignored)
	}
	return p
}

// injected logs an injected fault.
func (h *faultHook) injected(cl *mqtt.Client, k faultKind, what string, p *faultPlan) {
	attrs := []any{"client", cl.ID, "packet", k.String(), "fault", what}
	if p.hasID {
		attrs = append(attrs, "request_id", clipID(p.id))
	}
	h.e.s.log.Info("fault injected", attrs...)
}

// OnConnect refuses a CONNECT carrying fault:rejectconnect with its code.
// mochi sends no CONNACK for an OnConnect error, so it is sent here.
func (h *faultHook) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	if cl.Net.Inline || !hasFaultProps(pk.Properties.User) {
		return nil
	}
	p := h.plan(cl, faultConnect, pk.Properties.User)
	if p.action != faultReject {
		return nil
	}
	code := faultCode(p.code)
	h.injected(cl, faultConnect, fmt.Sprintf("CONNACK 0x%02X", p.code), &p)
	_ = h.e.broker.SendConnack(cl, code, false, nil)
	return code
}

// faultCode is a reason code with the reason string the client sees.
func faultCode(c byte) packets.Code {
	return packets.Code{Code: c, Reason: "injected fault"}
}

func kindOf(typ byte) (faultKind, bool) {
	switch typ {
	case packets.Publish:
		return faultPublish, true
	case packets.Subscribe:
		return faultSubscribe, true
	case packets.Unsubscribe:
		return faultUnsubscribe, true
	}
	return 0, false
}

// ackOf is the acknowledgement a packet gets; ok is false for a QoS 0
// PUBLISH, which gets none.
func ackOf(pk *packets.Packet) (ackKey, bool) {
	switch pk.FixedHeader.Type {
	case packets.Subscribe:
		return ackKey{packets.Suback, pk.PacketID}, true
	case packets.Unsubscribe:
		return ackKey{packets.Unsuback, pk.PacketID}, true
	}
	switch pk.FixedHeader.Qos {
	case 1:
		return ackKey{packets.Puback, pk.PacketID}, true
	case 2:
		return ackKey{packets.Pubrec, pk.PacketID}, true
	}
	return ackKey{packets.Publish, 0}, false
}

func (h *faultHook) client(cl *mqtt.Client) *faultClient {
	fc := h.clients[cl]
	if fc == nil {
		fc = &faultClient{}
		h.clients[cl] = fc
	}
	return fc
}

// OnPacketRead plans the fault of a PUBLISH, SUBSCRIBE or UNSUBSCRIBE,
// and carries out an immediate disconnect: the connection ends before
// mochi processes (or acknowledges) the packet.
func (h *faultHook) OnPacketRead(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	k, ok := kindOf(pk.FixedHeader.Type)
	if !ok || cl.Net.Inline {
		return pk, nil
	}
	h.mu.Lock()
	if fc := h.clients[cl]; fc != nil {
		fc.cur = nil
	}
	h.mu.Unlock()
	if !hasFaultProps(pk.Properties.User) {
		return pk, nil
	}
	p := h.plan(cl, k, pk.Properties.User)
	switch p.action {
	case faultDisconnect:
		what := fmt.Sprintf("DISCONNECT 0x%02X", p.code)
		h.injected(cl, k, what, &p)
		if h.isRequest(k, &pk) {
			h.trace(cl.ID, pk.Payload, "injected fault: "+what+" before the request was processed", true, true)
		}
		_ = h.e.broker.DisconnectClient(cl, faultCode(p.code))
		return pk, packets.ErrRejectPacket
	case faultLater:
		d := &delayed{plan: p, kind: k, answered: true}
		d.ack, _ = ackOf(&pk)
		if h.isRequest(k, &pk) {
			d.request = true
			d.verb, d.key = requestNames(pk.Payload)
		}
		if h.answerAwaited(cl, k, &pk) {
			d.answer, d.answered = string(pk.Properties.CorrelationData), false
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.closed || h.pending >= maxPendingFaults {
			h.e.s.log.Warn("fault ignored: too many delayed disconnects waiting", "client", cl.ID,
				"packet", k.String(), "limit", maxPendingFaults)
			return pk, nil
		}
		fc := h.client(cl)
		if len(fc.waiting) >= maxPendingFaultsPerClient {
			h.e.s.log.Warn("fault ignored: too many delayed disconnects waiting for this client", "client", cl.ID,
				"packet", k.String(), "limit", maxPendingFaultsPerClient)
			return pk, nil
		}
		if fc.waiting == nil {
			fc.waiting = make(map[*delayed]struct{})
			fc.byAck = make(map[ackKey]*delayed)
			fc.byAnswer = make(map[string]*delayed)
			fc.timers = make(map[*delayed]*time.Timer)
		}
		if fc.byAck[d.ack] != nil || (!d.answered && fc.byAnswer[d.answer] != nil) {
			h.e.s.log.Warn("fault ignored: packet id or correlation data already awaited by a delayed disconnect",
				"client", cl.ID, "packet", k.String())
			return pk, nil
		}
		h.pending++
		fc.waiting[d] = struct{}{}
		fc.byAck[d.ack] = d
		if !d.answered {
			fc.byAnswer[d.answer] = d
		}
	case faultReject:
		h.mu.Lock()
		h.client(cl).cur = &p
		h.mu.Unlock()
	}
	return pk, nil
}

// isRequest reports whether pk is a PUBLISH on the state store's request
// topic: its faults are traced as requests (Options.OnRequest).
func (h *faultHook) isRequest(k faultKind, pk *packets.Packet) bool {
	return k == faultPublish && pk.TopicName == RequestTopic && h.e.s.observing()
}

// takeReject returns the reject planned for cl's packet being processed.
func (h *faultHook) takeReject(cl *mqtt.Client) *faultPlan {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := h.clients[cl]
	if fc == nil || fc.cur == nil {
		return nil
	}
	p := fc.cur
	fc.cur = nil
	return p
}

// OnPublish refuses a PUBLISH planned to be rejected: PUBACK (or PUBREC)
// with the code, and nothing routed or decided; a QoS 0 PUBLISH, which
// has no acknowledgement, is dropped.
func (h *faultHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline {
		return pk, nil
	}
	p := h.takeReject(cl)
	if p == nil {
		return pk, nil
	}
	ack, acked := ackOf(&pk)
	what := "dropped (QoS 0: no PUBACK to refuse it with)"
	if acked {
		name := "PUBACK"
		if ack.typ == packets.Pubrec {
			name = "PUBREC"
		}
		what = fmt.Sprintf("%s 0x%02X", name, p.code)
	}
	h.injected(cl, faultPublish, what, p)
	if h.isRequest(faultPublish, &pk) {
		h.trace(cl.ID, pk.Payload, "injected fault: "+what+", the request was not processed", true, false)
	}
	if acked {
		// mochi sends no acknowledgement for a rejected packet, and has
		// not taken a receive quota slot for it yet.
		_ = cl.WritePacket(packets.Packet{
			FixedHeader: packets.FixedHeader{Type: ack.typ},
			PacketID:    pk.PacketID,
			ReasonCode:  p.code,
			Properties:  packets.Properties{ReasonString: faultCode(p.code).Reason},
		})
	}
	return pk, packets.ErrRejectPacket
}

// OnSubscribe makes a SUBSCRIBE planned to be rejected subscribe to
// nothing (every filter replaced by an invalid one), and has its SUBACK's
// codes replaced by the fault's (OnPacketEncode).
func (h *faultHook) OnSubscribe(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	return h.neuter(cl, faultSubscribe, packets.Suback, pk)
}

// OnUnsubscribe does for an UNSUBSCRIBE what OnSubscribe does for a
// SUBSCRIBE: nothing is unsubscribed, and the UNSUBACK carries the code.
func (h *faultHook) OnUnsubscribe(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	return h.neuter(cl, faultUnsubscribe, packets.Unsuback, pk)
}

func (h *faultHook) neuter(cl *mqtt.Client, k faultKind, ack byte, pk packets.Packet) packets.Packet {
	if cl.Net.Inline {
		return pk
	}
	p := h.takeReject(cl)
	if p == nil {
		return pk
	}
	h.injected(cl, k, fmt.Sprintf("%s 0x%02X", k.ack(), p.code), p)
	filters := make(packets.Subscriptions, len(pk.Filters))
	for i := range filters {
		filters[i] = packets.Subscription{Filter: ""} // invalid: matches nothing, subscribes nothing
	}
	pk.Filters = filters
	h.mu.Lock()
	fc := h.client(cl)
	if fc.acks == nil {
		fc.acks = make(map[ackKey]byte)
	}
	fc.acks[ackKey{ack, pk.PacketID}] = p.code
	h.mu.Unlock()
	return pk
}

// OnPacketEncode writes a rejected SUBSCRIBE's or UNSUBSCRIBE's code into
// every reason code of its acknowledgement.
func (h *faultHook) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type != packets.Suback && pk.FixedHeader.Type != packets.Unsuback {
		return pk
	}
	h.mu.Lock()
	fc := h.clients[cl]
	code, ok := byte(0), false
	if fc != nil && fc.acks != nil {
		key := ackKey{pk.FixedHeader.Type, pk.PacketID}
		if code, ok = fc.acks[key]; ok {
			delete(fc.acks, key)
		}
	}
	h.mu.Unlock()
	if !ok {
		return pk
	}
	codes := make([]byte, len(pk.ReasonCodes))
	for i := range codes {
		codes[i] = code
	}
	pk.ReasonCodes = codes
	pk.Properties.ReasonString = faultCode(code).Reason
	return pk
}

// OnPacketSent notes the acknowledgement of a packet, and the answer to
// a request, that a delayed disconnect waits for.
func (h *faultHook) OnPacketSent(cl *mqtt.Client, pk packets.Packet, _ []byte) {
	switch pk.FixedHeader.Type {
	case packets.Puback, packets.Pubrec, packets.Suback, packets.Unsuback:
		h.acked(cl, ackKey{pk.FixedHeader.Type, pk.PacketID})
	case packets.Publish:
		if len(pk.Properties.CorrelationData) > 0 {
			h.answered(cl, pk.Properties.CorrelationData)
		}
	}
}

// OnPacketProcessed notes the end of a QoS 0 PUBLISH, which has no
// acknowledgement.
func (h *faultHook) OnPacketProcessed(cl *mqtt.Client, pk packets.Packet, _ error) {
	if pk.FixedHeader.Type == packets.Publish && pk.FixedHeader.Qos == 0 {
		h.acked(cl, ackKey{packets.Publish, 0})
	}
}

// answerAwaited reports whether the delay of a disconnect asked for by
// pk waits for the answer to it: a request the service will answer (at
// QoS 1, not retained, with correlation data) on a response topic cl is
// subscribed to.
func (h *faultHook) answerAwaited(cl *mqtt.Client, k faultKind, pk *packets.Packet) bool {
	if k != faultPublish || pk.TopicName != RequestTopic || pk.FixedHeader.Qos != 1 || pk.FixedHeader.Retain ||
		pk.Properties.ResponseTopic == "" || len(pk.Properties.CorrelationData) == 0 {
		return false
	}
	_, ok := h.e.broker.Topics.Subscribers(pk.Properties.ResponseTopic).Subscriptions[cl.ID]
	return ok
}

func (h *faultHook) acked(cl *mqtt.Client, ack ackKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := h.clients[cl]
	if fc == nil || fc.byAck[ack] == nil {
		return
	}
	d := fc.byAck[ack]
	delete(fc.byAck, ack)
	d.acked = true
	h.arm(cl, fc, d)
}

func (h *faultHook) answered(cl *mqtt.Client, corr []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fc := h.clients[cl]
	if fc == nil || len(fc.byAnswer) == 0 {
		return
	}
	d := fc.byAnswer[string(corr)]
	if d == nil {
		return
	}
	delete(fc.byAnswer, d.answer)
	d.answered = true
	h.arm(cl, fc, d)
}

// arm starts the delay of d once it waits for nothing else. h.mu is held.
func (h *faultHook) arm(cl *mqtt.Client, fc *faultClient, d *delayed) {
	if !d.acked || !d.answered || h.closed {
		return
	}
	fc.timers[d] = time.AfterFunc(d.plan.delay, func() { h.fire(cl, d) })
}

// fire disconnects cl for a delayed fault, unless its connection ended
// meanwhile (a new connection of the same client is not disconnected).
func (h *faultHook) fire(cl *mqtt.Client, d *delayed) {
	h.mu.Lock()
	fc := h.clients[cl]
	if fc == nil || h.closed {
		h.mu.Unlock()
		return
	}
	if _, ok := fc.waiting[d]; !ok {
		h.mu.Unlock()
		return
	}
	delete(fc.waiting, d)
	delete(fc.timers, d)
	h.pending--
	h.mu.Unlock()
	if cl.Closed() {
		return
	}
	what := fmt.Sprintf("DISCONNECT 0x%02X after %s", d.plan.code, d.plan.delay)
	h.injected(cl, d.kind, what, &d.plan)
	if d.request {
		h.traceNamed(cl.ID, d.verb, d.key, "injected fault: "+what+"; the request was answered", false, true)
	}
	_ = h.e.broker.DisconnectClient(cl, faultCode(d.plan.code))
}

// OnDisconnect forgets a connection: its delayed disconnects are not
// carried out on a later connection of the same client.
func (h *faultHook) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forget(cl)
}

func (h *faultHook) forget(cl *mqtt.Client) {
	fc := h.clients[cl]
	if fc == nil {
		return
	}
	for _, t := range fc.timers {
		t.Stop()
	}
	h.pending -= len(fc.waiting)
	delete(h.clients, cl)
}

// close stops every delayed disconnect.
func (h *faultHook) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for cl := range h.clients {
		h.forget(cl)
	}
}

// trace tells Options.OnRequest of a request a fault ended.
func (h *faultHook) trace(client string, payload []byte, reason string, dropped, kicked bool) {
	verb, key := requestNames(payload)
	h.traceNamed(client, verb, key, reason, dropped, kicked)
}

func (h *faultHook) traceNamed(client, verb string, key []byte, reason string, dropped, kicked bool) {
	if !h.e.s.observing() {
		return
	}
	h.e.s.opts.OnRequest(&RequestEvent{
		Start: time.Now(), Client: client, Verb: verb, Key: key,
		Reason: reason, Dropped: dropped, Disconnected: kicked,
	})
}

// maxFaultTraceKey bounds the copy of a key kept for the trace of a
// delayed disconnect.
const maxFaultTraceKey = 1024

// requestNames are the verb and key of a request payload, as far as it
// decodes (empty otherwise); the key is a copy, cut to maxFaultTraceKey.
func requestNames(payload []byte) (string, []byte) {
	args, err := resp3.ParseRequest(payload, nil)
	if err != nil || len(args) == 0 {
		return "", nil
	}
	verb := verbName(args[0])
	if len(args) < 2 {
		return verb, nil
	}
	key := args[1]
	if len(key) > maxFaultTraceKey {
		key = key[:maxFaultTraceKey]
	}
	return verb, bytes.Clone(key)
}
