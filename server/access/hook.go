package access

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/internal/logtext"
)

// Hook is the embedded broker's only authentication and ACL hook (mochi
// lets a client in when any hook says yes, so there must be just one). It
// refuses client ids protocol.ValidClientID refuses and applies one topic
// rule, which protects what the state store writes: protocol.MayPublish
// for what a client sends (PUBLISH, and its will at CONNECT and again when
// the will fires) and subscribeAllowed for what it reads (SUBSCRIBE and
// every delivery).
type Hook struct {
	mqtt.HookBase
	sec Security
	log *slog.Logger
	// reserved are the client ids no client may take (HookConfig.Reserved).
	reserved []string
	// session finds the client (connected or with a kept session) that
	// holds an id: the broker's client table.
	session func(id string) (*mqtt.Client, bool)
	// connack sends a refusing CONNACK (mochi sends none for an OnConnect
	// error).
	connack func(cl *mqtt.Client, reason packets.Code, present bool, props *packets.Properties) error

	// mu makes mayTakeOver's check and claim of a client id one step:
	// between it and mochi registering the session, the id is held in
	// claims, so two identities cannot both pass for one id and the later
	// take over the earlier's fresh session.
	mu     sync.Mutex
	claims map[string]claim
}

// HookConfig is what NewHook builds a Hook from.
type HookConfig struct {
	Security Security
	Log      *slog.Logger
	// Reserved are client ids no client may take: the service's own, and
	// Options.ReservedClientIDs (the web console's).
	Reserved []string
	// Session finds the client (connected or with a kept session) that
	// holds an id: the broker's client table. Nil: no take-over checks.
	Session func(id string) (*mqtt.Client, bool)
	// Connack sends a refusing CONNACK (mochi sends none for an OnConnect
	// error); nil sends none.
	Connack func(cl *mqtt.Client, reason packets.Code, present bool, props *packets.Properties) error
}

// NewHook returns the hook for c; add it to the broker as its only
// authentication and ACL hook.
func NewHook(c HookConfig) *Hook {
	if c.Security.Passwords != nil {
		// Made now, not by the first CONNECT of an unknown user, which
		// would otherwise take twice as long as the next ones (and as a
		// known user's).
		dummyHash()
	}
	return &Hook{sec: c.Security, log: c.Log, reserved: c.Reserved, session: c.Session, connack: c.Connack}
}

// claim is an id that passed mayTakeOver and whose session mochi has not
// registered yet; it lapses at until if the connection never gets there.
type claim struct {
	who   Identity
	until time.Time
}

// claimTTL bounds how long an id stays claimed by a connection that never
// completes; connections that do complete release it at once.
const claimTTL = 30 * time.Second

func (*Hook) ID() string { return "ssgen-access" }

func (*Hook) Provides(b byte) bool {
	return bytes.Contains([]byte{
		mqtt.OnConnect, mqtt.OnConnectAuthenticate, mqtt.OnSessionEstablished,
		mqtt.OnACLCheck, mqtt.OnPublish, mqtt.OnWill,
	}, []byte{b})
}

// OnConnect settles what mochi parsed from CONNECT before anything else
// looks at it:
//   - a client id with a control character is refused with CONNACK 0x85
//     (Client Identifier not valid), as MQTT allows; mochi itself refuses
//     invalid UTF-8 and NUL (it closes the connection). The topic rule
//     relies on every connected id being protocol.ValidClientID;
//   - an id mochi assigned (the client sent none) is replaced by a random
//     one: mochi's are sequential, so another client could predict and
//     claim the next ones;
//   - a will must be one the client could publish itself: a will is
//     published by the broker, not through a PUBLISH, so it would
//     otherwise escape the topic rule (a forged notification). Refused
//     with CONNACK 0x87 (Not Authorized), or 0x9A (retain not supported)
//     for a retained will on the state store's topics (see OnPublish);
//   - a will's delay ends with the session: without that, a will delayed
//     past a session that ended at disconnect waits under the bare id,
//     and whoever connects with that id next cancels it;
//   - under authorization rules, a client id or user name longer than
//     MaxIdentityBytes is refused (CONNACK 0x85 or 0x86): the rules'
//     principal globs are matched against them.
func (h *Hook) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	if id := pk.Connect.ClientIdentifier; id != "" && !protocol.ValidClientID(id) {
		h.log.Warn("connection refused: client id not valid", "client", id, "remote", cl.Net.Remote)
		if h.connack != nil {
			_ = h.connack(cl, packets.ErrClientIdentifierNotValid, false, nil)
		}
		return packets.ErrClientIdentifierNotValid
	}
	if pk.Connect.ClientIdentifier == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		cl.ID = "ssgen-" + hex.EncodeToString(b[:])
		cl.Properties.Props.AssignedClientID = cl.ID
	}
	if h.sec.Authorization != nil {
		code := packets.CodeSuccess
		switch {
		case len(cl.ID) > MaxIdentityBytes:
			code = packets.ErrClientIdentifierNotValid
		case len(pk.Connect.Username) > MaxIdentityBytes:
			code = packets.ErrBadUsernameOrPassword
		}
		if code != packets.CodeSuccess {
			h.log.Warn("connection refused: identity too long for the authorization rules",
				"client", logtext.Clip(cl.ID, 64), "client_bytes", len(cl.ID), "user_bytes", len(pk.Connect.Username),
				"limit", MaxIdentityBytes, "remote", cl.Net.Remote)
			if h.connack != nil {
				_ = h.connack(cl, code, false, nil)
			}
			return code
		}
	}
	if !pk.Connect.WillFlag {
		return nil
	}
	code := packets.CodeSuccess
	switch {
	case !protocol.MayPublish(cl.ID, pk.Connect.WillTopic):
		code = packets.ErrNotAuthorized
	case pk.Connect.WillRetain && protocol.ServiceOwned(pk.Connect.WillTopic):
		code = packets.ErrRetainNotSupported
	}
	if code == packets.CodeSuccess {
		if w := &cl.Properties.Will; w.WillDelayInterval > cl.Properties.Props.SessionExpiryInterval {
			w.WillDelayInterval = cl.Properties.Props.SessionExpiryInterval
		}
		return nil
	}
	h.log.Warn("connection refused: will", "client", cl.ID, "topic", pk.Connect.WillTopic,
		"retain", pk.Connect.WillRetain, "reason", code.Reason, "remote", cl.Net.Remote)
	if h.connack != nil {
		_ = h.connack(cl, code, false, nil)
	}
	return code
}

// OnPublish refuses the retain flag on a topic the state store owns
// (protocol.ServiceOwned: PUBACK 0x9A, retain not supported). A client may
// publish there only under its own level, but a retained message outlives
// the session that published it, and a level is the client's only while
// its id is: the next connection with that id, under another identity,
// would read it or find one planted for it. Elsewhere, under "clients/"
// or not, retain is ordinary MQTT, as on the real broker.
func (h *Hook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Retain && !cl.Net.Inline && protocol.ServiceOwned(pk.TopicName) {
		h.log.Warn("publish refused: retained on the state store's topics", "client", cl.ID, "topic", pk.TopicName)
		return pk, packets.ErrRetainNotSupported
	}
	return pk, nil
}

// OnWill checks the will again as it fires. A will that passed OnConnect
// passes here too (the id and the rule have not changed); should one ever
// not, it is emptied: mochi publishes whatever this returns, and a message
// without a topic is delivered to nobody (see OnACLCheck).
func (h *Hook) OnWill(cl *mqtt.Client, will mqtt.Will) (mqtt.Will, error) {
	if protocol.MayPublish(cl.ID, will.TopicName) {
		return will, nil
	}
	h.log.Warn("will dropped: topic in the state store's topics", "client", cl.ID, "topic", will.TopicName)
	return mqtt.Will{}, nil
}

// OnConnectAuthenticate lets a client in, in this order: a client that
// sends a user name while a password file is configured must match it
// (even with a certificate); a verified client certificate suffices; with
// neither, only when anonymous clients are allowed. Then the client id
// must be free for this identity (mayTakeOver). A refusal is CONNACK 0x86
// (bad user name or password), mochi's code for every refusal.
func (h *Hook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	return h.authenticate(cl, pk) && h.mayTakeOver(cl)
}

// mayTakeOver refuses a connection that would take over the session of a
// client id held by another identity: that session's subscriptions,
// pending messages and KEYNOTIFY registrations are its owner's, and the
// topic rules trust the client id. Without authentication every identity
// is the same (empty), so any client may take over any id, as in MQTT.
// The service's own id, and the ids of its tools (Options.ReservedClientIDs:
// the web console's), are never available.
//
// The check and the claim of the id are one step under h.mu (see claims):
// mochi registers the session only after its OnSessionEstablish hooks, so
// without the claim two identities could both pass for a free id and the
// later take over the earlier's session.
func (h *Hook) mayTakeOver(cl *mqtt.Client) bool {
	if slices.Contains(h.reserved, cl.ID) {
		h.log.Warn("connection refused: reserved client id", "client", cl.ID, "remote", cl.Net.Remote)
		return false
	}
	if h.session == nil {
		return true
	}
	me := h.IdentityOf(cl)
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	held := false
	if old, ok := h.session(cl.ID); ok && old != cl {
		if a := h.IdentityOf(old); !a.same(&me) {
			held = true
		}
	}
	if c, ok := h.claims[cl.ID]; ok && now.Before(c.until) && !c.who.same(&me) {
		held = true
	}
	if held {
		h.log.Warn("connection refused: client id held by another identity", "client", cl.ID, "remote", cl.Net.Remote)
		return false
	}
	if h.claims == nil {
		h.claims = map[string]claim{}
	}
	if len(h.claims) >= 1024 {
		for id, c := range h.claims {
			if !now.Before(c.until) {
				delete(h.claims, id)
			}
		}
	}
	h.claims[cl.ID] = claim{who: me, until: now.Add(claimTTL)}
	return true
}

// OnSessionEstablished releases the claim: mochi's client table now holds
// the id, and mayTakeOver finds it there.
func (h *Hook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	h.mu.Lock()
	delete(h.claims, cl.ID)
	h.mu.Unlock()
}

func (h *Hook) authenticate(cl *mqtt.Client, pk packets.Packet) bool {
	if h.sec.Passwords != nil && pk.Connect.UsernameFlag {
		user := string(pk.Connect.Username)
		if h.sec.Passwords.check(user, pk.Connect.Password) {
			return true
		}
		h.log.Warn("connection refused: wrong user name or password", "client", cl.ID, "user", user, "remote", cl.Net.Remote)
		return false
	}
	if h.sec.certAuth() && verifiedCert(cl) {
		return true
	}
	if h.sec.anonymousAllowed() {
		return true
	}
	h.log.Warn("connection refused: no credentials", "client", cl.ID, "remote", cl.Net.Remote)
	return false
}

// OnACLCheck keeps what the state store writes to the client it is for
// (protocol.ServiceOwned): no client publishes into the notification space
// or another client's state store response topics, and none subscribes to
// (or is delivered) another client's (see subscribeAllowed). The rest of
// "clients/" is ordinary MQTT: the official SDKs' command executors answer
// on their invokers' "clients/{invokerId}/…" topics.
func (h *Hook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	if write {
		if !protocol.MayPublish(cl.ID, topic) {
			h.log.Warn("publish refused: the state store's topics", "client", cl.ID, "topic", topic)
			return false
		}
		return true
	}
	if topic == "" {
		return false // only an emptied will has no topic
	}
	if !subscribeAllowed(cl.ID, topic) {
		h.log.Warn("subscription refused: the state store's topics for another client", "client", cl.ID, "filter", topic)
		return false
	}
	return true
}

// tlsState is the connection's TLS state, nil on plain TCP.
func tlsState(cl *mqtt.Client) *tls.ConnectionState {
	c, ok := cl.Net.Conn.(interface{ ConnectionState() tls.ConnectionState }) // *tls.Conn, or tlsConn wrapping it
	if !ok {
		return nil
	}
	cs := c.ConnectionState()
	return &cs
}

func verifiedCert(cl *mqtt.Client) bool {
	cs := tlsState(cl)
	return cs != nil && len(cs.VerifiedChains) > 0
}

// IdentityOf is what authorization rules may match for cl.
func (h *Hook) IdentityOf(cl *mqtt.Client) Identity {
	id := Identity{clientID: cl.ID}
	if h.sec.Passwords != nil {
		// Only a checked user name is an identity: OnConnectAuthenticate
		// refused every client whose user name did not match.
		id.username = string(cl.Properties.Username)
	}
	if h.sec.certAuth() {
		id.certNames = certNames(tlsState(cl))
	}
	return id
}
