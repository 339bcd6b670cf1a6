// Package hlc implements the hybrid logical clocks (HLC) that the Azure IoT
// Operations state store uses for versions, request timestamps (__ts) and
// fencing tokens (__ft).
//
// An HLC is a wall-clock reading in milliseconds since the Unix epoch, a
// counter that orders events within one millisecond, and the id of the node
// that produced it. Its text form is "{wallClockMs}:{counter}:{nodeId}".
// Official clients pad the numbers to 15 and 5 digits; Parse accepts padded
// and unpadded forms alike, and String emits the padded one.
//
// # Drift
//
// A Clock refuses to merge a received clock more than its maximum drift
// (DefaultMaxDrift, one minute) ahead of its physical clock: the ssgen
// runtime fails the request whose reply carries one, and drops such a
// notification. The state store holds up its side: it accepts a request
// __ts or __ft at most DefaultMaxDrift - 5 s ahead of its own clock and
// never lets its counter overflow into the next millisecond, so every
// version it hands out stays within the drift of a client whose clock is
// at most 5 s behind the server's.
package hlc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HLC is one hybrid logical clock value. The zero value is the zero clock,
// which sorts before every clock read from a running system.
type HLC struct {
	// Wall is milliseconds since the Unix epoch.
	Wall uint64
	// Counter orders events that share a Wall reading.
	Counter uint64
	// Node identifies the clock's owner. It never contains ':'.
	Node string
}

// ErrMalformed is matched (with errors.Is) by every error Parse returns.
var ErrMalformed = errors.New("hlc: malformed timestamp")

// ParseError describes why a string is not an HLC.
type ParseError struct {
	Input  string
	Reason string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("hlc: malformed timestamp %q: %s", e.Input, e.Reason)
}

// Is reports whether target is ErrMalformed.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// Parse reads the text form "{wallClockMs}:{counter}:{nodeId}". The string
// must have exactly three ':'-separated parts; the first two are unsigned
// decimal integers (leading zeros allowed, no sign); the node id may be any
// string without ':'.
func Parse(s string) (HLC, error) {
	wall, rest, ok := strings.Cut(s, ":")
	if !ok {
		return HLC{}, &ParseError{Input: s, Reason: "want 3 ':'-separated parts"}
	}
	counter, node, ok := strings.Cut(rest, ":")
	if !ok || strings.IndexByte(node, ':') >= 0 {
		return HLC{}, &ParseError{Input: s, Reason: "want 3 ':'-separated parts"}
	}
	w, err := parseUint(wall)
	if err != nil {
		return HLC{}, &ParseError{Input: s, Reason: "wall clock: " + err.Error()}
	}
	c, err := parseUint(counter)
	if err != nil {
		return HLC{}, &ParseError{Input: s, Reason: "counter: " + err.Error()}
	}
	return HLC{Wall: w, Counter: c, Node: node}, nil
}

func parseUint(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("out of range")
	}
	if err != nil {
		return 0, errors.New("not an unsigned decimal")
	}
	return v, nil
}

// String returns the padded text form official clients emit, for example
// "001696374425000:00001:StateStore".
func (h HLC) String() string {
	return string(h.AppendText(make([]byte, 0, 22+len(h.Node))))
}

// AppendText appends the padded text form to dst.
func (h HLC) AppendText(dst []byte) []byte {
	dst = appendPadded(dst, h.Wall, 15)
	dst = append(dst, ':')
	dst = appendPadded(dst, h.Counter, 5)
	dst = append(dst, ':')
	return append(dst, h.Node...)
}

func appendPadded(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], v, 10)
	for i := len(digits); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// Compare orders clocks by wall clock, then counter, then node id (byte-wise).
// It returns -1, 0 or +1.
func (h HLC) Compare(o HLC) int {
	switch {
	case h.Wall != o.Wall:
		return cmp(h.Wall, o.Wall)
	case h.Counter != o.Counter:
		return cmp(h.Counter, o.Counter)
	default:
		return strings.Compare(h.Node, o.Node)
	}
}

func cmp(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// IsZero reports whether h is the zero clock.
func (h HLC) IsZero() bool { return h.Wall == 0 && h.Counter == 0 && h.Node == "" }

// Time returns the wall-clock part as a time.Time.
func (h HLC) Time() time.Time { return time.UnixMilli(int64(h.Wall)) }
