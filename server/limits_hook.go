package server

import (
	"bytes"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// kickWriteTimeout is how long a client disconnected for its output has to
// take its DISCONNECT: writes to a client that stopped reading would
// otherwise wait for its keep-alive, holding the client's write lock.
const kickWriteTimeout = 2 * time.Second

// limitHook enforces the connection, session and output limits inside the
// embedded broker (see Limits).
type limitHook struct {
	mqtt.HookBase
	e *embedded
}

func (h *limitHook) ID() string { return "ssgen-limits" }

func (h *limitHook) Provides(b byte) bool {
	return bytes.Contains([]byte{
		mqtt.OnConnect, mqtt.OnSessionEstablish, mqtt.OnDisconnect, mqtt.OnClientExpired, mqtt.OnPacketRead,
		mqtt.OnQosPublish, mqtt.OnQosComplete, mqtt.OnQosDropped, mqtt.OnPublishDropped,
	}, []byte{b})
}

// OnConnect answers a connection accepted over a connection limit with
// CONNACK 0x97 (Quota exceeded); mochi sends no CONNACK for an OnConnect
// error, so it is sent here.
func (h *limitHook) OnConnect(cl *mqtt.Client, _ packets.Packet) error {
	tc := netConnOf(cl.Net.Conn)
	if tc == nil || !tc.refuse {
		return nil
	}
	h.e.stats.refused.Add(1)
	if ok, skipped := h.e.lim.log.allow(time.Now()); ok {
		h.e.s.log.Warn("connection refused: over the connection limit", "client", cl.ID, "remote", cl.Net.Remote,
			"max_connections", h.e.lim.maxConns, "max_per_address", h.e.lim.maxPerIP, "similar_not_logged", skipped)
	}
	_ = h.e.broker.SendConnack(cl, packets.ErrQuotaExceeded, false, nil)
	return packets.ErrQuotaExceeded
}

// OnSessionEstablish runs before mochi looks up the client id's session:
// a kept session is taken off the eviction list first.
func (h *limitHook) OnSessionEstablish(cl *mqtt.Client, _ packets.Packet) {
	h.e.sessions.established(cl.ID)
}

// OnPacketRead caps a Session Expiry Interval raised by DISCONNECT, which
// mochi takes as it comes (it caps only the CONNECT's).
func (h *limitHook) OnPacketRead(_ *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type == packets.Disconnect && pk.Properties.SessionExpiryIntervalFlag {
		pk.Properties.SessionExpiryInterval = min(pk.Properties.SessionExpiryInterval,
			h.e.broker.Options.Capabilities.MaximumSessionExpiryInterval)
	}
	return pk, nil
}

func (h *limitHook) OnDisconnect(cl *mqtt.Client, _ error, expire bool) {
	if cl.Net.Inline {
		return
	}
	if h.e.out.kicked(cl) {
		h.e.sessions.end(cl)
		h.e.out.forget(cl)
		return
	}
	h.e.sessions.disconnected(cl, expire)
}

func (h *limitHook) OnClientExpired(cl *mqtt.Client) {
	h.e.sessions.expired(cl)
}

func (h *limitHook) OnQosPublish(cl *mqtt.Client, pk packets.Packet, _ int64, _ int) {
	if pk.FixedHeader.Type != packets.Publish || cl.Net.Inline {
		return // an acknowledgement of the client's own QoS 1 or 2 PUBLISH
	}
	h.e.held(cl, pk.PacketID, messageCost(&pk))
}

func (h *limitHook) OnQosComplete(cl *mqtt.Client, pk packets.Packet) {
	h.e.out.remove(cl, pk.PacketID)
}

func (h *limitHook) OnQosDropped(cl *mqtt.Client, pk packets.Packet) {
	h.e.out.remove(cl, pk.PacketID)
}

// OnPublishDropped: mochi took the message back out of the in-flight
// table without a hook.
func (h *limitHook) OnPublishDropped(cl *mqtt.Client, _ packets.Packet) {
	h.e.out.resync(cl)
}

// held records a QoS 1 message entering cl's in-flight table, and
// disconnects cl when that puts it over Limits.MaxClientOutputBytes.
func (e *embedded) held(cl *mqtt.Client, id uint16, size int64) {
	if e.out.add(cl, id, size) {
		go e.kickForOutput(cl)
	}
}

// kickForOutput ends the session of a client over its output limit and
// disconnects it with DISCONNECT 0x97 (Quota exceeded: the limit is this
// client's, the server is not busy for others). Ending the session is what
// frees the messages; keeping it would keep them for the client's return,
// and a session announced as present on reconnect must still hold them.
// Runs in its own goroutine: the message that went over was being handed
// over by a goroutine that may be this client's own reader.
func (e *embedded) kickForOutput(cl *mqtt.Client) {
	held := e.out.held(cl)
	e.stats.outputKicks.Add(1)
	e.s.log.Warn("client disconnected: too many unacknowledged messages", "client", cl.ID, "remote", cl.Net.Remote,
		"held_bytes", held, "limit", e.out.limit)
	// No more notifications for it: they would queue while the
	// connection winds down (OnDisconnect drops the registrations too,
	// but only once the connection has ended).
	e.s.eng.DropClient(cl.ID)
	tc := netConnOf(cl.Net.Conn)
	if tc != nil {
		tc.kick(kickWriteTimeout)
	}
	end := func() { e.sessions.end(cl) }
	if g := gateOf(cl); g != nil {
		// The in-flight table is written here: keep the client's reader
		// out of mochi's double read lock meanwhile (readGate).
		g.pass(end)
	} else {
		end()
	}
	if cl.Closed() {
		e.out.forget(cl)
		return
	}
	_ = e.broker.DisconnectClient(cl, packets.ErrQuotaExceeded)
}
