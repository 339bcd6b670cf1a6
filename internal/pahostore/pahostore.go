// Package pahostore holds Discard, a paho session store that keeps no
// packets, for clients whose unacknowledged PUBLISHes are never resent.
//
// paho's in-memory store serializes a copy of every QoS 1 PUBLISH until its
// PUBACK, to resend it on a reconnect that resumes the session. ssgen's
// runtime forgets every unacknowledged request when a connection drops (a
// late resend could overwrite newer writes), and the external-mode service
// starts a clean session on every connect, so those copies are never read:
// per request they were about 4 % of the CPU and 3 KB of garbage.
package pahostore

import (
	"errors"
	"io"

	"github.com/eclipse/paho.golang/paho/session/state"
)

// Discard is a paho session store that keeps nothing: Put succeeds and
// drops the packet, List is always empty.
type Discard struct{}

// ErrNotStored is what Get returns: there is never a packet to read.
var ErrNotStored = errors.New("pahostore: packets are not kept")

// NewState is a paho session state over two Discard stores. It still
// allocates packet identifiers and enforces the broker's Receive Maximum.
func NewState() *state.State { return state.New(Discard{}, Discard{}) }

// Put drops the packet.
func (Discard) Put(uint16, byte, io.WriterTo) error { return nil }

// Get reports ErrNotStored.
func (Discard) Get(uint16) (io.ReadCloser, error) { return nil, ErrNotStored }

// Delete does nothing.
func (Discard) Delete(uint16) error { return nil }

// Quarantine does nothing.
func (Discard) Quarantine(uint16) error { return nil }

// List reports no packets.
func (Discard) List() ([]uint16, error) { return nil, nil }

// Reset does nothing.
func (Discard) Reset() error { return nil }
