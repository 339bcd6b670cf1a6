package server

import (
	"fmt"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// Defaults of Limits for the embedded broker.
const (
	// DefaultMaxPacketBytes is the real broker's maximum packet size on its
	// default memory profile (docs/wire-protocol.md#limits).
	DefaultMaxPacketBytes = 64 << 20
	// DefaultMaxInflight is the Receive Maximum the embedded broker
	// advertises when Limits.MaxInflight is 0 (mochi's own default).
	DefaultMaxInflight = 1024

	// DefaultConnectTimeout is how long a new connection may take to
	// complete its CONNECT (TLS handshake included).
	DefaultConnectTimeout = 10 * time.Second
	// DefaultMaxConnectBytes bounds the first packet of a connection. A
	// CONNECT carries a client id, credentials, a will and properties: a
	// few hundred bytes in practice, so 64 KiB leaves room for large
	// tokens and wills while an unauthenticated connection cannot make
	// the server buffer the 64 MiB any later packet may have.
	DefaultMaxConnectBytes = 64 << 10
	// DefaultMaxConnections bounds open connections; lowered to the
	// process's open-file limit minus 64 (kept for the store, logs and
	// outgoing sockets) where that is smaller, so that a flood of
	// connections meets a refusal before it meets EMFILE.
	DefaultMaxConnections = 10000
	// DefaultMaxSessionExpiry caps the Session Expiry Interval a client may
	// ask for; the cap is announced in CONNACK. The official SDKs ask for
	// 0xFFFFFFFF (forever) and need their session back after a dropped
	// connection, which takes seconds to minutes: an hour covers that
	// with room, while a client id that never comes back stops costing
	// memory after an hour.
	DefaultMaxSessionExpiry = time.Hour
	// DefaultMaxSessions bounds the sessions kept for disconnected clients
	// (each costs its subscriptions, unacknowledged messages and ~150 KiB
	// of broker bookkeeping); past it the oldest is ended.
	DefaultMaxSessions = 1000
	// DefaultMaxClientOutputBytes bounds what the broker holds for one
	// client: responses and notifications sent and not yet acknowledged,
	// or not yet sent. A single message always passes (a 64 MiB value can
	// be read by a client that has nothing else pending); 64 MiB is 256
	// GET answers of 256 KiB, far more than a client that reads and
	// acknowledges as it goes ever leaves behind.
	DefaultMaxClientOutputBytes = 64 << 20
	// DefaultMaxWatchesPerClient bounds the KEYNOTIFY registrations of one
	// client (both transports). Each costs the service a few hundred bytes
	// and its notifications; a client watching more keys than this is
	// almost always a pattern watch over keys others keep creating, and
	// 10,000 is well above what one process watches one key at a time
	// (ssgen's pattern watches stop at 4,096 keys by default).
	DefaultMaxWatchesPerClient = 10000
	// DefaultMaxWatchBytesPerClient bounds the sum of the lengths of the
	// keys one client watches: a registration holds its own copy of its
	// key, which neither --max-bytes nor --max-keys counts. 4 MiB is 4,096
	// keys (a pattern watch's default) of 1 KiB each.
	DefaultMaxWatchBytesPerClient = 4 << 20
	// DefaultMaxWatches and DefaultMaxWatchBytes bound the registrations
	// of all clients together (about 0.6 KiB of bookkeeping each besides
	// the key) and the sum of their keys' lengths: this is what bounds
	// them where client ids are not verified (external mode, where every
	// request may name a new __srcId) or connections are many.
	DefaultMaxWatches    = 250000
	DefaultMaxWatchBytes = 64 << 20
)

// Limits bound what one request or one client may use. Zero values mean
// "unlimited" except where a default is named. Every limit a request can
// break is answered like the store quotas, "-ERR the quota has been
// exceeded" with __stat 200, and changes nothing: it is the only error of
// the protocol that means "too much" (docs/wire-protocol.md#limits).
type Limits struct {
	// MaxKeyBytes is the longest key any command may name (SET, GET, DEL,
	// VDEL, KEYNOTIFY).
	MaxKeyBytes int
	// MaxValueBytes is the longest SET value. Without it a value is bounded
	// by the packet size only, as on the real broker.
	MaxValueBytes int
	// MaxWatchesPerClient is how many keys one client may KEYNOTIFY at
	// once; re-registering a key it already watches is always allowed.
	// DefaultMaxWatchesPerClient when 0; a negative value is unlimited.
	// One more is answered "-ERR the quota has been exceeded".
	MaxWatchesPerClient int
	// MaxWatchBytesPerClient bounds the sum of the lengths of the keys one
	// client watches; MaxWatches and MaxWatchBytes bound the registrations
	// of all clients together and the sum of their keys' lengths. Each
	// takes its default (DefaultMaxWatchBytesPerClient, DefaultMaxWatches,
	// DefaultMaxWatchBytes) when 0 and is unlimited when negative; a
	// registration over one is answered "-ERR the quota has been
	// exceeded", renewing one a client holds always passes.
	MaxWatchBytesPerClient int64
	MaxWatches             int
	MaxWatchBytes          int64
	// MaxPacketBytes (embedded only) is the largest MQTT packet the broker
	// reads, DefaultMaxPacketBytes when 0; it is advertised in CONNACK as
	// Maximum Packet Size. A larger packet is never read into memory: the
	// broker closes the connection after its fixed header (mochi sends no
	// DISCONNECT 0x95), so no -ERR can be sent for it.
	MaxPacketBytes int
	// MaxInflight (embedded only) is the Receive Maximum advertised in
	// CONNACK: how many QoS 1 requests a client may have sent and not yet
	// had acknowledged, DefaultMaxInflight when 0, at most 65535. See
	// the package documentation for what it bounds.
	MaxInflight int

	// The fields below apply to the embedded broker only; each takes its
	// default when 0.

	// ConnectTimeout is how long an accepted connection has to complete
	// its CONNECT (and TLS handshake); then it is closed.
	// DefaultConnectTimeout when 0. After CONNECT the client's keep-alive
	// applies instead.
	ConnectTimeout time.Duration
	// MaxConnectBytes bounds a connection's first packet (its CONNECT),
	// checked on the packet's fixed header: a larger one closes the
	// connection before its body is read. DefaultMaxConnectBytes when 0.
	MaxConnectBytes int
	// MaxConnections bounds open connections (DefaultMaxConnections when
	// 0, or less, see there), MaxConnectionsPerIP those from one remote
	// address (half of MaxConnections when 0: one address cannot take all
	// of them). A connection over either is answered CONNACK 0x97 (Quota
	// exceeded); once a tenth of the limit more are open, further ones
	// are closed as soon as they are accepted.
	MaxConnections      int
	MaxConnectionsPerIP int
	// MaxSessionExpiry caps the Session Expiry Interval a client may ask
	// for (DefaultMaxSessionExpiry when 0), in CONNECT or DISCONNECT; the
	// cap is announced in CONNACK. Whole seconds.
	MaxSessionExpiry time.Duration
	// MaxSessions bounds the sessions kept for disconnected clients
	// (DefaultMaxSessions when 0); a disconnect past it ends the session
	// that has been disconnected longest.
	MaxSessions int
	// MaxClientOutputBytes bounds the bytes of messages the broker holds
	// for one client: QoS 1 responses and notifications not yet
	// acknowledged (whether written or still queued). A client past it,
	// with more than one message pending, is disconnected with DISCONNECT
	// 0x97 (Quota exceeded) and its session ended, which frees them.
	// DefaultMaxClientOutputBytes when 0.
	MaxClientOutputBytes int64
}

func (l Limits) connectTimeout() time.Duration { return or(l.ConnectTimeout, DefaultConnectTimeout) }
func (l Limits) maxConnectBytes() int          { return or(l.MaxConnectBytes, DefaultMaxConnectBytes) }
func (l Limits) maxSessions() int              { return or(l.MaxSessions, DefaultMaxSessions) }
func (l Limits) maxInflight() int              { return or(l.MaxInflight, DefaultMaxInflight) }

// maxWatches is the engine's MaxWatchesPerClient (0: unlimited).
func (l Limits) maxWatches() int {
	switch {
	case l.MaxWatchesPerClient < 0:
		return 0
	case l.MaxWatchesPerClient == 0:
		return DefaultMaxWatchesPerClient
	}
	return l.MaxWatchesPerClient
}

// watchQuota is a watch limit for the engine: def when 0, 0 (unlimited)
// when negative.
func watchQuota[T int | int64](v, def T) T {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

func (l Limits) maxClientOutputBytes() int64 {
	return or(l.MaxClientOutputBytes, DefaultMaxClientOutputBytes)
}

func (l Limits) maxConnections() int {
	if l.MaxConnections > 0 {
		return l.MaxConnections
	}
	n := DefaultMaxConnections
	if fds := openFileLimit(); fds > 0 {
		n = min(n, max(fds-64, 16))
	}
	return n
}

func (l Limits) maxConnectionsPerIP(total int) int {
	if l.MaxConnectionsPerIP > 0 {
		return l.MaxConnectionsPerIP
	}
	return max(total/2, 1)
}

// maxSessionExpiry is the cap in seconds, as MQTT counts it.
func (l Limits) maxSessionExpiry() uint32 {
	d := or(l.MaxSessionExpiry, DefaultMaxSessionExpiry)
	return uint32(min(max(d/time.Second, 1), 0xFFFFFFFF))
}

func or[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (l Limits) validate(external bool) error {
	switch {
	case external && (l.MaxPacketBytes != 0 || l.MaxInflight != 0):
		return fmt.Errorf("%w: MaxPacketBytes and MaxInflight apply to the embedded broker only", ErrInvalidOptions)
	case external && (l.ConnectTimeout != 0 || l.MaxConnectBytes != 0 || l.MaxConnections != 0 ||
		l.MaxConnectionsPerIP != 0 || l.MaxSessionExpiry != 0 || l.MaxSessions != 0 || l.MaxClientOutputBytes != 0):
		return fmt.Errorf("%w: connection, session and client output limits apply to the embedded broker only", ErrInvalidOptions)
	case l.MaxKeyBytes < 0 || l.MaxValueBytes < 0 || l.MaxPacketBytes < 0,
		l.ConnectTimeout < 0 || l.MaxConnectBytes < 0 || l.MaxConnections < 0 || l.MaxConnectionsPerIP < 0,
		l.MaxSessionExpiry < 0 || l.MaxSessions < 0 || l.MaxClientOutputBytes < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalidOptions)
	case l.MaxInflight < 0 || l.MaxInflight > 65535:
		return fmt.Errorf("%w: MaxInflight %d not in 0..65535", ErrInvalidOptions, l.MaxInflight)
	case l.MaxPacketBytes > 268435455:
		return fmt.Errorf("%w: MaxPacketBytes %d above MQTT's 268435455", ErrInvalidOptions, l.MaxPacketBytes)
	}
	return nil
}

// applyTo sets the broker capabilities that enforce the transport-level
// limits.
func (l Limits) applyTo(caps *mqtt.Capabilities) {
	caps.MaximumPacketSize = uint32(DefaultMaxPacketBytes)
	if l.MaxPacketBytes > 0 {
		caps.MaximumPacketSize = uint32(l.MaxPacketBytes)
	}
	caps.ReceiveMaximum = DefaultMaxInflight
	if l.MaxInflight > 0 {
		caps.ReceiveMaximum = uint16(l.MaxInflight)
	}
	caps.MaximumSessionExpiryInterval = l.maxSessionExpiry()
}
