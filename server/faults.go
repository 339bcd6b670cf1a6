package server

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
)

// The fault vocabulary of Microsoft's SDK tests (Options.FaultInjection):
// what a packet's fault:* user properties ask for. This file is the pure
// part, deciding from the properties; faults_hook.go acts on the decision
// inside the embedded broker.

// FaultRequestIDs is how many fault:requestid values the embedded broker
// remembers per packet type (CONNECT, PUBLISH, SUBSCRIBE, UNSUBSCRIBE)
// with Options.FaultInjection: past that, the id seen longest ago is
// forgotten, and a packet repeating it would fault again. Ids are kept as
// SHA-256 digests, so any id costs the same.
const FaultRequestIDs = 4096

// MaxFaultDelay is the longest fault:delay honoured (one day, in seconds:
// 86400); a longer one is a value that does not parse, and the packet
// gets no fault.
const MaxFaultDelay = 24 * time.Hour

// maxPendingFaults bounds the delayed disconnects waiting at once, over
// all clients, and maxPendingFaultsPerClient those of one connection, so
// that one client cannot use up the others' share; a packet asking for
// one more gets no fault.
const (
	maxPendingFaults          = 1024
	maxPendingFaultsPerClient = 16
)

// faultKind is the type of packet a fault rides on.
type faultKind uint8

const (
	faultConnect faultKind = iota
	faultPublish
	faultSubscribe
	faultUnsubscribe
	faultKinds
)

func (k faultKind) String() string {
	return [...]string{"CONNECT", "PUBLISH", "SUBSCRIBE", "UNSUBSCRIBE"}[k]
}

// ack names the packet that acknowledges one of kind k, whose reason code
// a reject fault sets.
func (k faultKind) ack() string {
	return [...]string{"CONNACK", "PUBACK", "SUBACK", "UNSUBACK"}[k]
}

// rejectName is the property asking for a reject of a packet of kind k.
func (k faultKind) rejectName() string {
	return [...]string{protocol.FaultRejectConnect, protocol.FaultRejectPublish,
		protocol.FaultRejectSubscribe, protocol.FaultRejectUnsubscribe}[k]
}

// faultAction is what a packet's properties ask for.
type faultAction uint8

const (
	faultNone       faultAction = iota
	faultDisconnect             // DISCONNECT code before the packet is processed
	faultLater                  // process and acknowledge, DISCONNECT code after delay
	faultReject                 // acknowledge with code (CONNACK, PUBACK, SUBACK, UNSUBACK), not processed
)

// faultPlan is the decision for one packet.
type faultPlan struct {
	action faultAction
	code   byte
	delay  time.Duration
	// id is the fault:requestid, when hasID.
	id    string
	hasID bool
	// ignored says why the packet's fault properties ask for nothing: a
	// value that does not parse, or a code not valid for the packet.
	ignored string
}

// Reason codes a server may send, per packet (MQTT 5.0 sections 3.2.2.2,
// 3.4.2.1, 3.9.3, 3.11.3 and 3.14.2.1). A reject takes only refusals
// (0x80 and up); a disconnect takes every code a server may send in a
// DISCONNECT, 0x00 (normal disconnection) included.
var (
	connackRefusals = codeSet(0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A,
		0x8C, 0x90, 0x95, 0x97, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F)
	pubackRefusals   = codeSet(0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99)
	subackRefusals   = codeSet(0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2)
	unsubackRefusals = codeSet(0x80, 0x83, 0x87, 0x8F, 0x91)
	disconnectCodes  = codeSet(0x00, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D, 0x8E, 0x8F,
		0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2)
	refusals = [faultKinds]*[256]bool{connackRefusals, pubackRefusals, subackRefusals, unsubackRefusals}
)

func codeSet(codes ...byte) *[256]bool {
	var s [256]bool
	for _, c := range codes {
		s[c] = true
	}
	return &s
}

// hasFaultProps reports whether any user property is named fault:*, the
// only packets the decision needs to look at.
func hasFaultProps(props []packets.UserProperty) bool {
	for i := range props {
		if strings.HasPrefix(props[i].Key, protocol.FaultPrefix) {
			return true
		}
	}
	return false
}

// planFault decides what the user properties of a packet of kind k ask
// for. Names match exactly and the first property of a name counts. A
// packet whose applicable fault properties include one that does not
// parse, or a code not valid for its packet, gets no fault (ignored says
// which); fault:disconnect wins over the packet's reject; fault:delay
// alone, and fault properties that do not apply to the packet (a reject
// of another packet type, fault:disconnect on CONNECT), ask for nothing.
func planFault(k faultKind, props []packets.UserProperty) faultPlan {
	var p faultPlan
	var disc, delay, reject *string
	for i := range props {
		v := &props[i].Val
		switch props[i].Key {
		case protocol.FaultRequestID:
			if !p.hasID {
				p.id, p.hasID = *v, true
			}
		case protocol.FaultDisconnect:
			if disc == nil && k != faultConnect {
				disc = v
			}
		case protocol.FaultDelay:
			if delay == nil && k != faultConnect {
				delay = v
			}
		case k.rejectName():
			if reject == nil {
				reject = v
			}
		}
	}
	var code, rcode byte
	var secs uint64
	var err error
	if disc != nil {
		if code, err = parseCode(*disc, disconnectCodes, "DISCONNECT"); err != nil {
			p.ignored = fmt.Sprintf("%s: %v", protocol.FaultDisconnect, err)
			return p
		}
	}
	if delay != nil && disc != nil {
		if secs, err = strconv.ParseUint(*delay, 10, 32); err != nil || secs > uint64(MaxFaultDelay/time.Second) {
			p.ignored = fmt.Sprintf("%s: %s is not a whole number of seconds from 0 to %d",
				protocol.FaultDelay, quoteValue(*delay), int64(MaxFaultDelay/time.Second))
			return p
		}
	}
	if reject != nil {
		if rcode, err = parseCode(*reject, refusals[k], k.ack()); err != nil {
			p.ignored = fmt.Sprintf("%s: %v", k.rejectName(), err)
			return p
		}
	}
	switch {
	case disc != nil && delay != nil:
		p.action, p.code, p.delay = faultLater, code, time.Duration(secs)*time.Second
	case disc != nil:
		p.action, p.code = faultDisconnect, code
	case reject != nil:
		p.action, p.code = faultReject, rcode
	}
	return p
}

// parseCode reads a decimal reason code and checks it is in valid, the
// codes a server may send in packet (a refusal for CONNACK, PUBACK,
// SUBACK and UNSUBACK).
func parseCode(v string, valid *[256]bool, packet string) (byte, error) {
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("%s is not a decimal reason code from 0 to 255", quoteValue(v))
	}
	if !valid[n] {
		if packet == "DISCONNECT" {
			return 0, fmt.Errorf("0x%02X is not a reason code a server sends in DISCONNECT", n)
		}
		return 0, fmt.Errorf("0x%02X is not a %s reason code refusing the packet", n, packet)
	}
	return byte(n), nil
}

// quoteValue quotes a client's property value for a log line, cut to 32
// bytes.
func quoteValue(v string) string {
	if len(v) > 32 {
		return strconv.Quote(v[:32]) + "..."
	}
	return strconv.Quote(v)
}

// clipID cuts a fault:requestid for a log line.
func clipID(id string) string {
	if len(id) > 64 {
		id = id[:64]
	}
	return strings.ToValidUTF8(id, "?")
}

// idMemory remembers the last n fault:requestid values seen, as digests,
// forgetting the least recently seen first. Not safe for concurrent use.
type idMemory struct {
	n     int
	order *list.List // of [32]byte, most recent at the front
	at    map[[32]byte]*list.Element
}

func newIDMemory(n int) *idMemory {
	return &idMemory{n: n, order: list.New(), at: make(map[[32]byte]*list.Element)}
}

// first records id and reports whether it was not remembered before.
func (m *idMemory) first(id string) bool {
	d := sha256.Sum256([]byte(id))
	if el, ok := m.at[d]; ok {
		m.order.MoveToFront(el)
		return false
	}
	m.at[d] = m.order.PushFront(d)
	if m.order.Len() > m.n {
		old := m.order.Back()
		m.order.Remove(old)
		delete(m.at, old.Value.([32]byte))
	}
	return true
}
