package resp3

import (
	"bytes"
	"strconv"

	"github.com/ssgen/ssgen/internal/protocol"
)

// Kind is the type of a response value.
type Kind uint8

// The value kinds of the state store's RESP3 subset.
const (
	KindSimple  Kind = iota + 1 // +OK
	KindError                   // -ERR text
	KindInteger                 // :1
	KindBulk                    // $n bytes
	KindNull                    // $-1
	KindArray                   // *n elements
)

var kindNames = [...]string{"invalid", "simple string", "error", "integer", "bulk string", "null", "array"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one decoded response value.
type Value struct {
	Kind Kind
	// Str is the text of a simple string or error (without the leading
	// '+' or '-'), or the bytes of a bulk string. It aliases the payload.
	Str []byte
	// Int is an integer's value.
	Int int64
	// Elems are an array's elements.
	Elems []Value
}

// ErrorText returns the message of an error value with the "ERR" prefix
// removed: "ERR some text" gives "some text". The article's "ERR: text"
// form is accepted too.
func (v Value) ErrorText() string {
	s := v.Str
	if rest, ok := bytes.CutPrefix(s, []byte("ERR")); ok {
		rest = bytes.TrimPrefix(rest, []byte(":"))
		s = bytes.TrimPrefix(rest, []byte(" "))
	}
	return string(s)
}

// ParseResponse decodes a response payload holding exactly one value.
// Errors match ErrSyntax.
func ParseResponse(payload []byte) (Value, error) {
	r := reader{buf: payload}
	v, err := r.value(0)
	if err != nil {
		return Value{}, err
	}
	return v, r.end()
}

func (r *reader) value(depth int) (Value, error) {
	start := r.pos
	c, err := r.typeByte()
	if err != nil {
		return Value{}, err
	}
	switch c {
	case '+', '-':
		l, err := r.line()
		if err != nil {
			return Value{}, err
		}
		k := KindSimple
		if c == '-' {
			k = KindError
		}
		return Value{Kind: k, Str: l[:len(l):len(l)]}, nil
	case ':':
		l, err := r.line()
		if err != nil {
			return Value{}, err
		}
		n, err := strconv.ParseInt(string(l), 10, 64)
		if err != nil || len(l) == 0 || l[0] == '+' {
			return Value{}, &SyntaxError{Offset: start + 1, Reason: "bad integer"}
		}
		return Value{Kind: KindInteger, Int: n}, nil
	case '$':
		n, err := r.length()
		if err != nil {
			return Value{}, err
		}
		if n < 0 {
			return Value{Kind: KindNull}, nil
		}
		b, err := r.bulkBody(n)
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: KindBulk, Str: b}, nil
	case '*':
		if depth >= MaxDepth {
			return Value{}, &SyntaxError{Offset: start, Reason: "arrays nested too deeply"}
		}
		n, err := r.arrayLen()
		if err != nil {
			return Value{}, err
		}
		elems := make([]Value, n)
		for i := range elems {
			if elems[i], err = r.value(depth + 1); err != nil {
				return Value{}, err
			}
		}
		return Value{Kind: KindArray, Elems: elems}, nil
	default:
		return Value{}, &SyntaxError{Offset: start, Reason: "unknown type byte " + strconv.QuoteRune(rune(c))}
	}
}

// AppendSimple appends s as a simple string ("+OK\r\n" for "OK"). A
// simple string is one line, so CR and LF in s are written as spaces.
func AppendSimple(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = appendLine(dst, s)
	return append(dst, '\r', '\n')
}

// AppendOK appends "+OK\r\n".
func AppendOK(dst []byte) []byte { return append(dst, "+"+protocol.ReplyOK+"\r\n"...) }

// AppendError appends the state store's error form "-ERR msg\r\n". CR
// and LF in msg are written as spaces, so text that came from a request
// cannot break the reply's framing.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, "-"+protocol.ErrorPrefix...)
	dst = appendLine(dst, msg)
	return append(dst, '\r', '\n')
}

// appendLine appends s with CR and LF replaced by spaces.
func appendLine(dst []byte, s string) []byte {
	start := len(dst)
	dst = append(dst, s...)
	for i := start; i < len(dst); i++ {
		if dst[i] == '\r' || dst[i] == '\n' {
			dst[i] = ' '
		}
	}
	return dst
}

// AppendInteger appends n as an integer (":-1\r\n").
func AppendInteger(dst []byte, n int64) []byte {
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// AppendNull appends the null bulk string "$-1\r\n".
func AppendNull(dst []byte) []byte { return append(dst, "$-1\r\n"...) }

// AppendValue appends any value; arrays are written recursively.
func AppendValue(dst []byte, v Value) []byte {
	switch v.Kind {
	case KindSimple:
		dst = append(dst, '+')
		dst = append(dst, v.Str...)
		return append(dst, '\r', '\n')
	case KindError:
		dst = append(dst, '-')
		dst = append(dst, v.Str...)
		return append(dst, '\r', '\n')
	case KindInteger:
		return AppendInteger(dst, v.Int)
	case KindBulk:
		return AppendBulk(dst, v.Str)
	case KindNull:
		return AppendNull(dst)
	case KindArray:
		dst = AppendArray(dst, len(v.Elems))
		for _, e := range v.Elems {
			dst = AppendValue(dst, e)
		}
		return dst
	}
	return dst
}
