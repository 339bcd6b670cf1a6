// Package resp3 encodes and decodes the RESP3 subset that the Azure IoT
// Operations state store speaks over MQTT.
//
// Requests are arrays of bulk strings ("*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n").
// Responses are one value: a simple string (+OK), an error (-ERR text), an
// integer (:1), a bulk string ($n), the null bulk string ($-1), or an array
// (notifications, SCAN pages). Notifications are arrays of bulk strings:
// NOTIFY SET VALUE v, or NOTIFY DELETE.
//
// Encoders append to a caller-supplied buffer and allocate nothing when the
// buffer has room. Decoders check every length against what is left of the
// payload before allocating, consume the whole payload, and return errors
// matching ErrSyntax. Decoded byte slices alias the payload: copy them if
// the payload's buffer is reused.
package resp3

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax is matched (with errors.Is) by every decoding error. The state
// store answers a request that fails to decode with its syntax error.
var ErrSyntax = errors.New("resp3: syntax error")

// SyntaxError locates a decoding error in the payload.
type SyntaxError struct {
	Offset int    // byte offset in the payload
	Reason string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("resp3: syntax error at byte %d: %s", e.Offset, e.Reason)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// MaxDepth bounds array nesting in responses; the state store nests at most
// two levels (SCAN).
const MaxDepth = 8

// minElemLen is the fewest bytes an element can take ("+\r\n"); an array
// header announcing more elements than the rest of the payload can hold is
// refused before anything is allocated for it.
const minElemLen = 3

// reader walks a payload.
type reader struct {
	buf []byte
	pos int
}

func (r *reader) fail(reason string) error {
	return &SyntaxError{Offset: r.pos, Reason: reason}
}

// line returns the bytes up to the next CRLF and moves past it.
func (r *reader) line() ([]byte, error) {
	for i := r.pos; i+1 < len(r.buf); i++ {
		if r.buf[i] == '\r' {
			if r.buf[i+1] != '\n' {
				return nil, &SyntaxError{Offset: i + 1, Reason: "CR not followed by LF"}
			}
			l := r.buf[r.pos:i]
			r.pos = i + 2
			return l, nil
		}
		if r.buf[i] == '\n' {
			return nil, &SyntaxError{Offset: i, Reason: "LF without CR"}
		}
	}
	return nil, r.fail("missing CRLF")
}

// length reads the decimal length after a '*' or '$' type byte. It returns
// -1 for "-1" (null) and refuses other negatives, signs, and overflow.
func (r *reader) length() (int, error) {
	start := r.pos
	l, err := r.line()
	if err != nil {
		return 0, err
	}
	if len(l) == 2 && l[0] == '-' && l[1] == '1' {
		return -1, nil
	}
	n, ok := parseDecimal(l)
	if !ok {
		return 0, &SyntaxError{Offset: start, Reason: "bad length"}
	}
	return n, nil
}

// parseDecimal parses a length as Redis writes one: a non-empty run of ASCII
// digits without leading zeros ("0" itself is fine) that fits in an int32 (no
// payload the broker carries is longer). One length has one spelling, so what
// parses re-encodes to the same bytes.
func parseDecimal(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > 1<<31-1 {
		return 0, false
	}
	return n, true
}

// bulkBody reads n bytes and the CRLF after them.
func (r *reader) bulkBody(n int) ([]byte, error) {
	if n > len(r.buf)-r.pos-2 {
		return nil, r.fail("bulk string longer than the payload")
	}
	b := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	if r.buf[r.pos] != '\r' || r.buf[r.pos+1] != '\n' {
		return nil, r.fail("bulk string not followed by CRLF")
	}
	r.pos += 2
	return b, nil
}

// arrayLen reads an array header whose type byte was already consumed and
// checks the count against the bytes left.
func (r *reader) arrayLen() (int, error) {
	start := r.pos
	n, err := r.length()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, &SyntaxError{Offset: start, Reason: "null array"}
	}
	if n > (len(r.buf)-r.pos)/minElemLen {
		return 0, &SyntaxError{Offset: start, Reason: "array longer than the payload"}
	}
	return n, nil
}

func (r *reader) typeByte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.fail("unexpected end of payload")
	}
	c := r.buf[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) end() error {
	if r.pos != len(r.buf) {
		return r.fail("trailing bytes")
	}
	return nil
}

func appendLen(dst []byte, kind byte, n int) []byte {
	dst = append(dst, kind)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}
