package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/mochiclose"
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/access"
	"github.com/ssgen/ssgen/server/engine"
)

// serviceClientID is the id of the inline client the service publishes
// responses and notifications through.
const serviceClientID = "$statestore"

// Queue sizes of the embedded broker. mochi drops (silently but for the
// OnPublishDropped hook) what overflows a client's outbound queue or
// in-flight table, so both are sized for notification bursts well above
// its defaults.
const (
	maxClientWritesPending = 16 << 10
	maxInflight            = 65535
)

// embedded runs the state store inside a mochi-mqtt broker.
type embedded struct {
	s       *Server
	broker  *mqtt.Server
	service *mqtt.Client // inline client that publishes for the service
	dropped atomic.Int64 // notifications and responses mochi dropped
	hook    *access.Hook
	faults  *faultHook     // nil without Options.FaultInjection
	accepts *acceptTracker // the listener, so close can settle accepted connections

	// Limits of connections, sessions and per-client output (Limits).
	stats    *counters
	lim      *connLimits
	out      *outputs
	sessions *sessions
	// wrapListener, set by tests before start, wraps the bound listener
	// (to inject accept errors).
	wrapListener func(net.Listener) net.Listener
}

func (e *embedded) listenHook(ln net.Listener) net.Listener {
	if e.wrapListener != nil {
		return e.wrapListener(ln)
	}
	return ln
}

func newEmbedded(s *Server) *embedded {
	caps := mqtt.NewDefaultServerCapabilities()
	// Behave like a real broker: acks carry no inherited properties, and
	// messages gain no expiry the publisher did not give them.
	caps.Compatibilities.NoInheritedPropertiesOnAck = true
	caps.MaximumMessageExpiryInterval = 0
	caps.MaximumClientWritesPending = maxClientWritesPending
	caps.MaximumInflight = maxInflight
	s.opts.Limits.applyTo(caps)
	broker := mqtt.New(&mqtt.Options{
		InlineClient: true,
		Capabilities: caps,
		Logger:       slog.New(mochiLog{s.log.Handler()}).With("component", "mochi"),
		// $SYS topics are of no use to a state store; publish them rarely.
		SysTopicResendInterval: 3600,
	})
	e := &embedded{s: s, broker: broker, hook: access.NewHook(access.HookConfig{Security: s.opts.Security, Log: s.log,
		Reserved: append([]string{serviceClientID}, s.opts.ReservedClientIDs...), Session: broker.Clients.Get, Connack: broker.SendConnack})}
	e.service = broker.NewClient(nil, mqtt.LocalListener, serviceClientID, true)
	e.stats = &counters{}
	e.lim = newConnLimits(s.opts.Limits)
	e.out = newOutputs(s.opts.Limits.maxClientOutputBytes())
	e.sessions = newSessions(broker, s.opts.Limits.maxSessions(), e.out, e.stats, s.log)
	return e
}

func (e *embedded) start(ctx context.Context) error {
	if err := e.broker.AddHook(e.hook, nil); err != nil {
		return err
	}
	if e.s.opts.FaultInjection {
		e.faults = newFaultHook(e)
		if err := e.broker.AddHook(e.faults, nil); err != nil {
			return err
		}
	}
	if err := e.broker.AddHook(&serviceHook{e: e}, nil); err != nil {
		return err
	}
	if err := e.broker.AddHook(&limitHook{e: e}, nil); err != nil {
		return err
	}
	addr := e.s.opts.Listen
	if addr == "" {
		addr = DefaultListen
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	e.accepts = newAcceptTracker(e.listenHook(ln), e.lim, e.stats, e.s.log)
	// TLS is put on by the tracker, which checks the first packet's size
	// on the plaintext.
	e.accepts.tls = e.s.opts.Security.TLS
	if err := e.broker.AddListener(listeners.NewNet("tcp", e.accepts)); err != nil {
		_ = ln.Close()
		return err
	}
	return e.broker.Serve()
}

func (e *embedded) addr() string {
	if l, ok := e.broker.Listeners.Get("tcp"); ok {
		return l.Address()
	}
	return ""
}

// close stops the broker through mochiclose, which avoids mochi v2.7.9's
// deadlock when a client disconnects during Close (an SDK's Stop during
// shutdown does that). Before that, no more connections are accepted and
// those already accepted are registered (see acceptTracker).
func (e *embedded) close() error {
	if e.faults != nil {
		e.faults.close()
	}
	if e.accepts != nil {
		e.accepts.stop(2 * time.Second)
	}
	return mochiclose.Close(e.broker)
}

// handle serves one PUBLISH on the request topic, in the requester's read
// goroutine, before its PUBACK: requests of one client are decided in
// order. An answer that waits for the disk is published later, from the
// group commit, through the client's read gate like a notification, and
// the request's PUBACK with it; the read goroutine goes on to the next
// request meanwhile. (Sent together, the two usually leave in one write;
// and the client's Receive Maximum then bounds its requests waiting for
// the disk, as it bounds unacknowledged ones.)
func (e *embedded) handle(cl *mqtt.Client, pk packets.Packet) error {
	id := pk.PacketID
	act, held := e.s.serve(cl.ID, func() (inbound, string) {
		in := inbound{
			QoS:             pk.FixedHeader.Qos,
			Retain:          pk.FixedHeader.Retain,
			ResponseTopic:   pk.Properties.ResponseTopic,
			CorrelationData: pk.Properties.CorrelationData,
			Payload:         pk.Payload,
			Client:          cl.ID,
			User:            make([]userProp, len(pk.Properties.User)),
		}
		if pol := e.s.opts.Security.Authorization; pol != nil {
			g := e.grantsOf(cl, pol)
			in.Authorize = g.Refusal
			in.Readable, in.ReadCost, in.TokenScope = g.MayRead, g.ReadCost, g.Scope()
		}
		for i, u := range pk.Properties.User {
			in.User[i] = userProp{u.Key, u.Val}
		}
		return in, ""
	}, func(chaos bool) {
		code := packets.ErrProtocolViolation
		if chaos {
			code = faultCode(packets.ErrAdministrativeAction.Code)
		}
		_ = e.broker.DisconnectClient(cl, code)
	}, func(out outcome, held bool) {
		// mochi sends no PUBACK for a rejected packet (and leaves the
		// receive quota alone): an answer that was held sends it.
		puback := uint16(0)
		if held {
			puback = id
		}
		e.respond(cl, &out, puback)
	})
	if act == actKick || held {
		return packets.ErrRejectPacket
	}
	return packets.CodeSuccessIgnore
}

// grantsOf is what pol grants cl, resolved on cl's first request and kept
// with its network connection, whose identity (client id, user name,
// certificate) is fixed for its life; it is resolved again for another
// Policy. A client without a tracked connection (the inline client) has
// it resolved for each request.
func (e *embedded) grantsOf(cl *mqtt.Client, pol *Policy) *access.Grants {
	tc := netConnOf(cl.Net.Conn)
	if tc != nil {
		if g := tc.grants.Load(); g != nil && g.Policy() == pol {
			return g
		}
	}
	id := e.hook.IdentityOf(cl)
	g := pol.GrantsFor(&id)
	if tc != nil {
		tc.grants.Store(g)
	}
	return g
}

// respond publishes the answer to a request of cl. A request whose answer
// waited for the disk has its packet id in puback (0 otherwise): its
// answer may be published from another goroutine than cl's read
// goroutine, so it passes cl's read gate as a notification does, and is
// followed by the request's PUBACK.
func (e *embedded) respond(cl *mqtt.Client, out *outcome, puback uint16) {
	r := out.Reply
	resp := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		PacketID:    1, // mochi validates that a QoS 1 PUBLISH has one, even from an inline client
		TopicName:   r.Topic,
		Payload:     r.Payload,
		Properties: packets.Properties{
			ContentType:     protocol.ContentType,
			CorrelationData: r.CorrelationData,
			User:            mochiProps(r.User),
		},
	}
	send := func() {
		if err := e.broker.InjectPacket(e.service, resp); err != nil {
			e.s.log.Error("cannot publish response", "client", cl.ID, "error", err)
		}
		if puback != 0 {
			// After the response: it waits in the client's outbound queue,
			// so the PUBACK is buffered and leaves in the same write.
			_ = cl.WritePacket(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: puback})
		}
	}
	if g := gateOf(cl); puback != 0 && g != nil {
		g.pass(send)
		return
	}
	send()
}

// deliver sends one notification to its watching client exactly once:
// through normal routing when the client holds a matching subscription,
// else straight into its session, as the real broker does for clients that
// never subscribed (docs/wire-protocol.md#notifications). Other subscribers of the topic get
// it through routing either way.
func (e *embedded) deliver(n engine.Notification) {
	e.s.notesSent.Add(1)
	e.out.dequeue(n.Client, notificationCost(&n)) // counted as held from here (inject, OnQosPublish)
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		PacketID:    1, // as for responses; inject assigns the client's own
		TopicName:   NotifyTopic(n.Client, n.Key),
		Payload:     n.Payload,
		Properties: packets.Properties{
			ContentType: protocol.ContentType,
			User:        mochiProps(notificationProps(n)),
		},
	}
	cl, known := e.broker.Clients.Get(n.Client)
	send := func() {
		_, routed := e.broker.Topics.Subscribers(pk.TopicName).Subscriptions[n.Client]
		if err := e.broker.InjectPacket(e.service, pk); err != nil {
			e.s.log.Error("cannot publish notification", "client", n.Client, "error", err)
		}
		if known && !routed {
			e.inject(cl, pk)
		}
	}
	if known {
		if g := gateOf(cl); g != nil {
			g.pass(send)
			return
		}
	}
	send()
}

// inject writes a QoS 1 PUBLISH into cl's session without a subscription:
// registered in its in-flight table (so it is resent after a reconnect
// like any other unacknowledged message) and written to the connection if
// one is open.
func (e *embedded) inject(cl *mqtt.Client, pk packets.Packet) {
	if cl.State.Inflight.Len() >= maxInflight {
		e.dropped.Add(1)
		e.s.notesDropped.Add(1)
		e.s.log.Warn("notification dropped: client in-flight table full", "client", cl.ID)
		return
	}
	id, err := cl.NextPacketID()
	if err != nil {
		e.dropped.Add(1)
		e.s.notesDropped.Add(1)
		e.s.log.Warn("notification dropped: no packet id left", "client", cl.ID)
		return
	}
	out := pk.Copy(false)
	out.PacketID = uint16(id)
	out.Origin = serviceClientID
	out.Created = time.Now().Unix()
	if cl.State.Inflight.Set(out) {
		atomic.AddInt64(&e.broker.Info.Inflight, 1) // processPuback takes it off again
	}
	e.held(cl, out.PacketID, messageCost(&out)) // mochi's OnQosPublish does not see this one
	cl.State.Inflight.DecreaseSendQuota()
	if cl.Closed() {
		return
	}
	if err := cl.WritePacket(out); err != nil {
		e.s.log.Debug("notification not written; kept in session", "client", cl.ID, "error", err)
	}
}

// drop un-counts a queued notification that is not delivered.
func (e *embedded) drop(n engine.Notification) {
	e.out.dequeue(n.Client, notificationCost(&n))
}

// queued counts a notification entering its watcher's queue (Server's
// serializer) towards the watcher's output limit: a watcher that does not
// read blocks its queue, which would otherwise grow without bound. It
// reports false, and the notification is dropped (and counted), when the
// watcher is being cut off for its output: its session ends with it.
func (e *embedded) queued(n engine.Notification) bool {
	cl, _ := e.broker.Clients.Get(n.Client)
	if cl != nil && e.out.kicked(cl) {
		e.dropped.Add(1)
		e.s.notesDropped.Add(1)
		return false
	}
	if e.out.enqueue(cl, n.Client, notificationCost(&n)) {
		go e.kickForOutput(cl)
	}
	return true
}

func mochiProps(props []userProp) []packets.UserProperty {
	out := make([]packets.UserProperty, len(props))
	for i, p := range props {
		out[i] = packets.UserProperty{Key: p.Key, Val: p.Value}
	}
	return out
}

// serviceHook connects the broker to the state store.
type serviceHook struct {
	mqtt.HookBase
	e *embedded
}

func (h *serviceHook) ID() string { return "statestore" }

func (h *serviceHook) Provides(b byte) bool {
	return bytes.Contains([]byte{
		mqtt.OnPublish, mqtt.OnSessionEstablish, mqtt.OnSessionEstablished, mqtt.OnDisconnect,
		mqtt.OnPublishDropped, mqtt.OnPacketEncode, mqtt.OnPacketProcessed,
	}, []byte{b})
}

// OnPacketProcessed runs in the client's read goroutine just before mochi
// looks at its in-flight table (see readGate).
func (h *serviceHook) OnPacketProcessed(cl *mqtt.Client, _ packets.Packet, _ error) {
	if g := gateOf(cl); g != nil {
		g.enter()
	}
}

// OnPacketEncode keeps user properties on every PUBLISH. A client whose
// CONNECT carries Request Problem Information = 0 (paho.golang sends that
// unless told otherwise) makes mochi drop user properties from all its
// packets, but MQTT 5.0 section 3.1.2.11.7 limits that to packets other than
// PUBLISH, CONNACK and DISCONNECT, and the real broker delivers __stat and
// __ts on responses and notifications regardless.
func (h *serviceHook) OnPacketEncode(_ *mqtt.Client, pk packets.Packet) packets.Packet {
	switch pk.FixedHeader.Type {
	case packets.Publish, packets.Connack, packets.Disconnect:
		pk.Mods.DisallowProblemInfo = false
	}
	if pk.FixedHeader.Type == packets.Connack {
		// mochi enforces its Maximum Packet Size without announcing it;
		// clients that know it fail locally instead of being cut off.
		pk.Properties.MaximumPacketSize = h.e.broker.Options.Capabilities.MaximumPacketSize
	}
	return pk
}

func (h *serviceHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.TopicName != RequestTopic || cl.Net.Inline {
		return pk, nil
	}
	return pk, h.e.handle(cl, pk)
}

// OnSessionEstablish runs before mochi looks for a session to take over:
// see awaitDeparture.
func (h *serviceHook) OnSessionEstablish(cl *mqtt.Client, _ packets.Packet) {
	h.e.awaitDeparture(cl)
}

func (h *serviceHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	h.e.s.log.Info("client connected", "client", cl.ID, "remote", cl.Net.Remote)
}

// OnDisconnect drops the client's KEYNOTIFY registrations, unless a new
// connection took the session over: that connection is already live and
// may have registered again.
func (h *serviceHook) OnDisconnect(cl *mqtt.Client, err error, _ bool) {
	if cl.Net.Inline {
		return
	}
	// mochi marks the old connection taken over only after it has closed
	// it; the client table's newer entry covers part of that window.
	if cur, ok := h.e.broker.Clients.Get(cl.ID); cl.IsTakenOver() || ok && cur != cl {
		h.e.s.log.Info("client connection taken over", "client", cl.ID)
		return
	}
	h.e.s.eng.DropClient(cl.ID)
	if err == nil { // the client sent DISCONNECT: nothing to look into
		h.e.s.log.Debug("client disconnected", "client", cl.ID)
		return
	}
	h.e.s.log.Info("client disconnected", "client", cl.ID, "error", err)
}

func (h *serviceHook) OnPublishDropped(cl *mqtt.Client, pk packets.Packet) {
	h.e.dropped.Add(1)
	if strings.HasPrefix(pk.TopicName, NotifyPrefix) {
		h.e.s.notesDropped.Add(1)
	}
	h.e.s.log.Warn("message to client dropped: outbound queue full", "client", cl.ID, "topic", pk.TopicName)
}

// departureWait bounds how long a connection waits for the previous
// connection of its client id to leave (awaitDeparture).
const departureWait = 2 * time.Second

// awaitDeparture holds a new connection while the previous connection of
// its client id is on its way out and will end its session. mochi (v2.7.9)
// ends such a session after the OnDisconnect hooks, deleting the client id
// from its table and unsubscribing the id's filters: a connection with the
// same id that arrives in between (a device reconnecting at once after a
// clean DISCONNECT) is added, then deleted and unsubscribed by the old
// connection's cleanup, so it receives nothing. Waiting until the old
// entry is gone closes that window; a previous connection that is still
// live, or whose session outlives it, is taken over by mochi as usual.
func (e *embedded) awaitDeparture(cl *mqtt.Client) {
	old, ok := e.broker.Clients.Get(cl.ID)
	if !ok || old == cl || !old.Closed() || old.IsTakenOver() || !sessionEnds(old) {
		return
	}
	deadline := time.Now().Add(departureWait)
	for d := 50 * time.Microsecond; ; d = min(2*d, 5*time.Millisecond) {
		if cur, ok := e.broker.Clients.Get(cl.ID); !ok || cur != old || old.IsTakenOver() {
			return
		}
		if time.Now().After(deadline) {
			e.s.log.Warn("the previous connection of a client id did not leave in time; connecting all the same",
				"client", cl.ID, "waited", departureWait)
			return
		}
		time.Sleep(d)
	}
}

// sessionEnds reports whether cl's session ends with its connection, as
// mochi decides it when the connection ends.
func sessionEnds(cl *mqtt.Client) bool {
	if cl.Properties.ProtocolVersion == 5 {
		return cl.Properties.Props.SessionExpiryInterval == 0
	}
	return cl.Properties.Clean
}
