package schemaval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ssgen/ssgen/runtime/codec"
)

// Error is a value that does not fit its declared type: stored bytes that
// do not decode (it matches codec.ErrDecode with errors.Is) or a value that
// cannot be encoded (it matches codec.ErrEncode).
type Error struct {
	// Path locates the part of the value at fault, empty for the whole
	// value: ".mode", ".zones[\"kitchen\"]", ".list[3].name".
	Path string
	// Msg says what is wrong, in words meant for a person.
	Msg string
	// Err is the underlying cause, if any (a library's error, or
	// codec.ErrDecode / codec.ErrEncode).
	Err error

	decode bool
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches codec.ErrDecode for a decoding failure and codec.ErrEncode
// for an encoding one.
func (e *Error) Is(target error) bool {
	if e.decode {
		return target == codec.ErrDecode
	}
	return target == codec.ErrEncode
}

// path is where in a value an error lies, built only when one happens:
// each level links to its parent.
type path struct {
	parent *path
	field  string // a struct field, or "" for an element
	key    string // a map key (when isKey)
	index  int    // a list index (when neither field nor key)
	isKey  bool
}

func (p *path) fieldOf(name string) *path { return &path{parent: p, field: name} }
func (p *path) keyOf(k string) *path      { return &path{parent: p, key: k, isKey: true} }
func (p *path) indexOf(i int) *path       { return &path{parent: p, index: i} }

// String renders the path: ".name" for a field whose name is a plain
// identifier, ["key"] for a map key or an unusual field name, [3] for a
// list element.
func (p *path) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	for q := p; q != nil; q = q.parent {
		switch {
		case q.field != "" && plainName(q.field):
			parts = append(parts, "."+q.field)
		case q.field != "":
			parts = append(parts, "["+strconv.Quote(q.field)+"]")
		case q.isKey:
			parts = append(parts, "["+strconv.Quote(q.key)+"]")
		default:
			parts = append(parts, "["+strconv.Itoa(q.index)+"]")
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String()
}

func plainName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-')) {
			return false
		}
	}
	return s != ""
}

func encodeErr(p *path, format string, a ...any) error {
	return &Error{Path: p.String(), Msg: fmt.Sprintf(format, a...), Err: codec.ErrEncode}
}

func decodeErr(p *path, cause error, format string, a ...any) error {
	if cause == nil {
		cause = codec.ErrDecode
	}
	return &Error{Path: p.String(), Msg: fmt.Sprintf(format, a...), Err: cause, decode: true}
}

// causeText is a library error's message without the library's own
// prefix, for use inside one of ours.
func causeText(err error) string {
	s := err.Error()
	for _, prefix := range []string{"msgpack: ", "json: ", "codec: "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return s
}

// quoteShort quotes a value for a message, cut short so that a huge value
// does not flood it.
func quoteShort(s string) string {
	const limit = 64
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// quoteList renders names for a message: "a", "b", "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
