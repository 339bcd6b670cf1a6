package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ssgen/ssgen/internal/protocol"
)

// Outcomes of a request that are not failures of the transport.
var (
	// ErrNotFound: GET found no value for the key.
	ErrNotFound = errors.New("statestore: key not found")
	// ErrConditionNotMet: a SET NX/NEX found the key in the way (":-1"), or
	// a VDEL found a different value.
	ErrConditionNotMet = errors.New("statestore: condition not met")
	// ErrInvalidArgument: the call was refused before anything was sent
	// (empty key, negative TTL, bad configuration).
	ErrInvalidArgument = errors.New("statestore: invalid argument")
)

// Transport outcomes.
var (
	// ErrConnectionLost: the connection dropped while the request was in
	// flight. The service may or may not have applied it (the MQTT session
	// redelivers an unacknowledged request after the reconnect), so retry
	// only what is safe to repeat.
	ErrConnectionLost = errors.New("statestore: connection lost")
	// ErrTimeout: no response within the request timeout. A *TimeoutError
	// matches both ErrTimeout and context.DeadlineExceeded.
	ErrTimeout = errors.New("statestore: request timed out")
	// ErrNoService: the broker kept answering the request "no matching
	// subscribers" (PUBACK 0x10) for Config.NoServiceWait: no state store
	// is attached to it.
	ErrNoService = errors.New("statestore: no state store answered")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("statestore: client closed")
	// ErrProtocol: the response broke the protocol (no __stat, an
	// unparsable payload, an unexpected RESP3 type).
	ErrProtocol = errors.New("statestore: protocol violation")
	// ErrInvalidVersion: a response that must hand back a version (a
	// stored SET, a GET hit, a DEL or VDEL answering 1 or 0) had no __ts,
	// an unparsable one or the zero clock. It comes as a *ProtocolError,
	// so it matches ErrProtocol too. For a SET, DEL or VDEL the service
	// may have applied the change: read the key to find out.
	ErrInvalidVersion = errors.New("statestore: response without a valid version (__ts)")
)

// The state store's -ERR texts, one sentinel each (see
// docs/wire-protocol.md). A *ServiceError matches the sentinel of its text
// with errors.Is.
var (
	ErrTimestampSkew            = sentinel(protocol.ErrTimestampSkew)
	ErrFencingTokenRequired     = sentinel(protocol.ErrFencingTokenRequired)
	ErrFencingTokenSkew         = sentinel(protocol.ErrFencingTokenSkew)
	ErrFencingTokenLowerVersion = sentinel(protocol.ErrFencingTokenLowerVersion)
	ErrQuotaExceeded            = sentinel(protocol.ErrQuotaExceeded)
	ErrSyntax                   = sentinel(protocol.ErrSyntax)
	ErrNotAuthorized            = sentinel(protocol.ErrNotAuthorized)
	ErrUnknownCommand           = sentinel(protocol.ErrUnknownCommand)
	ErrWrongNumberOfArguments   = sentinel(protocol.ErrWrongNumberOfArguments)
	ErrMissingTimestamp         = sentinel(protocol.ErrMissingTimestamp)
	ErrMalformedTimestamp       = sentinel(protocol.ErrMalformedTimestamp)
	ErrKeyLengthZero            = sentinel(protocol.ErrKeyLengthZero)

	// ErrPersistence is ssgen serve's own answer (the real service has
	// none): a write asked to be persisted could not be made durable, so
	// it was neither stored nor applied in memory. Retrying is safe.
	ErrPersistence = sentinel(protocol.ErrPersistence)

	// ErrInvalidToken is ssgen serve's own answer to a SCAN whose
	// continuation token (a Cursor) it did not issue for this pattern to a
	// client of the same access: altered, another pattern's, or
	// saved before the server restarted. Start the listing again.
	ErrInvalidToken = sentinel(protocol.ErrInvalidToken)

	// ErrSchemaViolation is ssgen serve's own answer to a SET refused by
	// --enforce refuse: the value does not fit its key's declaration. The
	// text goes on to name the declaration and field path
	// ("schema violation: Thermostat.Config .mode: ..."); a
	// *ServiceError of any such text matches it.
	ErrSchemaViolation = sentinel(protocol.SchemaViolationPrefix)
)

// sentinels are the sentinels of the -ERR texts, by text.
var sentinels = make(map[string]error, len(protocol.Errors))

// sentinel returns the sentinel of an -ERR text of protocol.Errors,
// registered for serviceSentinel.
func sentinel(text string) error {
	err := errors.New(text)
	sentinels[text] = err
	return err
}

// serviceSentinel is the sentinel of an exact -ERR text, or nil.
func serviceSentinel(text string) error {
	if s, ok := sentinels[text]; ok {
		return s
	}
	if strings.HasPrefix(text, protocol.SchemaViolationPrefix) {
		return ErrSchemaViolation
	}
	return nil
}

// ServiceError is a "-ERR text" answer of the state store. Text is kept
// verbatim, so texts this package does not know still reach the caller.
type ServiceError struct {
	Text string
}

func (e *ServiceError) Error() string { return "statestore: " + e.Text }

// Is matches the sentinel whose text equals e.Text.
func (e *ServiceError) Is(target error) bool {
	s := serviceSentinel(e.Text)
	return s != nil && s == target
}

// RPCError is an envelope-level failure: a response whose __stat is not
// 200 (400 bad header, 505 unsupported protocol version, anything else).
type RPCError struct {
	Status       int    // __stat
	Message      string // __stMsg
	PropertyName string // __propName (400)
	PropertyVal  string // __propVal (400)
	// SupportedMajor is __supProtMajVer (505).
	SupportedMajor string
}

func (e *RPCError) Error() string {
	s := fmt.Sprintf("statestore: rpc status %d", e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.PropertyName != "" {
		s += fmt.Sprintf(" (property %s=%q)", e.PropertyName, e.PropertyVal)
	}
	if e.SupportedMajor != "" {
		s += " (supported major version " + e.SupportedMajor + ")"
	}
	return s
}

// TimeoutError reports a request that got no response in time.
type TimeoutError struct {
	Op string // the request verb
	// Connected is false when the client never had a connection to send on
	// within the timeout.
	Connected bool
}

func (e *TimeoutError) Error() string {
	if !e.Connected {
		return "statestore: " + e.Op + ": timed out waiting for a connection"
	}
	return "statestore: " + e.Op + ": request timed out"
}

// Is matches ErrTimeout and context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// BrokerError is a refusal by the MQTT broker rather than the state store:
// a PUBACK, SUBACK or CONNACK reason code of 0x80 or more, or the reason of
// a DISCONNECT the broker sent (the cause of a lost connection).
type BrokerError struct {
	Packet     string // "PUBACK", "SUBACK", "CONNACK"
	ReasonCode byte
	Reason     string
}

func (e *BrokerError) Error() string {
	verb := "refused"
	if e.Packet == "DISCONNECT" {
		verb = "disconnected"
	}
	s := fmt.Sprintf("statestore: broker %s (%s reason 0x%02X)", verb, e.Packet, e.ReasonCode)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is makes a PUBACK Not Authorized (0x87, an ACL denial) match
// ErrNotAuthorized like the state store's own refusal.
func (e *BrokerError) Is(target error) bool {
	return target == ErrNotAuthorized && (e.ReasonCode == 0x87 || e.ReasonCode == 0x86)
}

// ErrNotificationsUnavailable: the broker refused this client's
// subscription to its notification topic (its SUBACK gave that
// subscription a reason code of 0x80 or more, typically 0x87 Not
// authorized), so no notification can reach the client. The client is
// connected and its requests work; Watch, WatchWith, Key.Watch,
// WatchPattern, WatchGroup and KeyNotify fail with it at once, without
// sending KEYNOTIFY, and a running watch ends with it when a reconnection
// finds the subscription refused. The error also unwraps to the
// *BrokerError with the SUBACK reason code (errors.As), so a 0x87 refusal
// matches ErrNotAuthorized too. Client.NotificationsErr reports it.
// Config.NotifyWithoutSubscription turns the refusal into a log line, for
// brokers that deliver notifications without a subscription.
var ErrNotificationsUnavailable = errors.New("statestore: notifications unavailable")

// notifyRefusedError is ErrNotificationsUnavailable with the refusal: the
// filter the broker refused and its SUBACK.
type notifyRefusedError struct {
	filter string
	suback *BrokerError
}

func (e *notifyRefusedError) Error() string {
	return prefix + "notifications unavailable, watches cannot work: the subscription to " + e.filter + " was refused: " + bare(e.suback)
}

// Is matches ErrNotificationsUnavailable.
func (e *notifyRefusedError) Is(target error) bool { return target == ErrNotificationsUnavailable }

// Unwrap returns the SUBACK's *BrokerError.
func (e *notifyRefusedError) Unwrap() error { return e.suback }

// ErrTooLarge is matched by a *PacketTooLargeError.
var ErrTooLarge = errors.New("statestore: request larger than the broker accepts")

// PacketTooLargeError: the request's PUBLISH would exceed the Maximum
// Packet Size the broker announced in its CONNACK, so it was not sent (a
// broker drops the connection of a client that sends one). It matches
// ErrTooLarge and ErrInvalidArgument.
type PacketTooLargeError struct {
	Op   string
	Size int // bytes the PUBLISH would take
	Max  int // the broker's limit
}

func (e *PacketTooLargeError) Error() string {
	return fmt.Sprintf("statestore: %s: request of %d bytes exceeds the broker's maximum packet size of %d", e.Op, e.Size, e.Max)
}

// Is matches ErrTooLarge and ErrInvalidArgument.
func (e *PacketTooLargeError) Is(target error) bool {
	return target == ErrTooLarge || target == ErrInvalidArgument
}

// ProtocolError describes a response that broke the protocol
// (docs/wire-protocol.md#responses).
type ProtocolError struct {
	Op     string
	Reason string
	Err    error
}

func (e *ProtocolError) Error() string {
	s := prefix + e.Op + ": protocol violation: " + e.Reason
	if e.Err != nil {
		s += ": " + bare(e.Err)
	}
	return s
}

// Is matches ErrProtocol.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

func (e *ProtocolError) Unwrap() error { return e.Err }

// connLostError is ErrConnectionLost with the verb that was in flight.
type connLostError struct {
	op    string
	cause error
}

func (e *connLostError) Error() string {
	s := prefix + e.op + ": connection lost"
	if e.cause != nil {
		s += " (" + bare(e.cause) + ")"
	}
	return s
}

func (e *connLostError) Is(target error) bool { return target == ErrConnectionLost }

func (e *connLostError) Unwrap() error { return e.cause }

// IsRetryable reports whether err is a transport failure after which the
// same request may succeed: a lost connection or a timeout. Service
// answers (-ERR, conditions) are not retryable.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrTimeout)
}

func invalidArg(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
