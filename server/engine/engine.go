// Package engine is the state store's protocol engine: a pure, deterministic
// state machine from decoded requests to RESP3 responses and notifications.
// It knows nothing of MQTT; the server package feeds it from a broker.
//
// SKELETON: the exported surface below is the contract the transports code
// against. Bodies marked TODO are being filled in.
package engine

import (
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// Config configures an Engine. The zero value is usable.
type Config struct {
	// Now is the physical time source (time.Now by default). Tests pass a
	// FakeClock's Now to fast-forward expiry and skew without sleeping.
	Now func() time.Time
	// NodeID is the node id of the versions the engine assigns
	// ("StateStore" by default, as in the public article).
	NodeID string
	// MaxDrift is how far ahead of the engine's clock a request __ts or __ft
	// may be (one minute by default).
	MaxDrift time.Duration
	// MaxKeys and MaxBytes are quotas (0 = unlimited). MaxBytes counts key
	// and value bytes. A request that would exceed either is answered with
	// "the quota has been exceeded" and changes nothing.
	MaxKeys  int
	MaxBytes int64
	// OnNotify receives every notification, in the order the changes
	// happened, synchronously while the engine holds its lock: it must not
	// block and must not call back into the engine.
	OnNotify func(Notification)
}

// Request is one decoded state store request.
type Request struct {
	// Args are the RESP3 request's bulk strings (verb first). They may alias
	// the MQTT payload; the engine copies what it keeps.
	Args [][]byte
	// Client is the MQTT client id of the requester; KEYNOTIFY
	// registrations belong to it.
	Client string
	// Timestamp is the raw __ts user property; HasTimestamp tells whether it
	// was present at all.
	Timestamp    string
	HasTimestamp bool
	// FencingToken is the raw __ft user property, if HasFencingToken.
	FencingToken    string
	HasFencingToken bool
}

// Result is the engine's answer to a Request.
type Result struct {
	// Payload is the RESP3 response, never empty.
	Payload []byte
	// Version is the __ts to put on the response; the zero HLC means the
	// response carries no __ts (a GET miss, an error).
	Version hlc.HLC
}

// Notification is a KEYNOTIFY notification for one watching client.
type Notification struct {
	Client  string  // the watching client's MQTT client id
	Key     []byte  // the key that changed (owned by the notification)
	Payload []byte  // NOTIFY SET VALUE v, or NOTIFY DELETE
	Version hlc.HLC // the __ts of the notification
}
