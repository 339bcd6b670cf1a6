package server

import (
	"fmt"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// Defaults of Limits for the embedded broker.
const (
	// DefaultMaxPacketBytes is the real broker's maximum packet size on its
	// default memory profile (wire contract §8).
	DefaultMaxPacketBytes = 64 << 20
	// DefaultMaxInflight is the Receive Maximum the embedded broker
	// advertises when Limits.MaxInflight is 0 (mochi's own default).
	DefaultMaxInflight = 1024
)

// Limits bound what one request or one client may use. Zero values mean
// "unlimited" except where a default is named. Every limit a request can
// break is answered like the store quotas, "-ERR the quota has been
// exceeded" with __stat 200, and changes nothing: it is the only error of
// the wire contract that means "too much".
type Limits struct {
	// MaxKeyBytes is the longest key any command may name (SET, GET, DEL,
	// VDEL, KEYNOTIFY).
	MaxKeyBytes int
	// MaxValueBytes is the longest SET value. Without it a value is bounded
	// by the packet size only, as on the real broker.
	MaxValueBytes int
	// MaxWatchesPerClient is how many keys one client may KEYNOTIFY at
	// once; re-registering a key it already watches is always allowed.
	MaxWatchesPerClient int
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
}

func (l Limits) validate(external bool) error {
	switch {
	case external && (l.MaxPacketBytes != 0 || l.MaxInflight != 0):
		return fmt.Errorf("%w: MaxPacketBytes and MaxInflight apply to the embedded broker only", ErrInvalidOptions)
	case l.MaxKeyBytes < 0 || l.MaxValueBytes < 0 || l.MaxWatchesPerClient < 0 || l.MaxPacketBytes < 0:
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
}
