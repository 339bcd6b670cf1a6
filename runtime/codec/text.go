package codec

import (
	"encoding"
	"errors"
	"strconv"
	"time"
	"unsafe"
)

// The codecs in this file store a value as its plain text form, so that
// other tools (a shell, another language's SDK, the ssgen get/set verbs) can
// read and write it without knowing an encoding. They are strict: no
// surrounding white space, no alternative spellings beyond what strconv
// accepts.

// String stores a string-kinded value as its bytes, unchanged. Any bytes
// decode, including invalid UTF-8, because the state store stores bytes.
type String[T ~string] struct{}

// ContentType returns ContentTypeText.
func (String[T]) ContentType() string { return ContentTypeText }

// Encode returns the bytes of v.
func (String[T]) Encode(v T) ([]byte, error) { return []byte(v), nil }

// Decode returns data as a T.
func (String[T]) Decode(data []byte) (T, error) { return T(data), nil }

// Bytes stores a byte slice unchanged.
type Bytes struct{}

// ContentType returns ContentTypeBytes.
func (Bytes) ContentType() string { return ContentTypeBytes }

// Encode returns v itself, not a copy: the caller must not change it while
// the write is in flight.
func (Bytes) Encode(v []byte) ([]byte, error) { return v, nil }

// Decode returns a copy of data, never nil, so that an empty stored value
// reads as an empty slice.
func (Bytes) Decode(data []byte) ([]byte, error) { return append([]byte{}, data...), nil }

// Bool stores "true" or "false". Decode also accepts the other spellings of
// strconv.ParseBool ("1", "t", "TRUE", ...), which other writers use.
type Bool[T ~bool] struct{}

// ContentType returns ContentTypeText.
func (Bool[T]) ContentType() string { return ContentTypeText }

// Encode returns "true" or "false".
func (Bool[T]) Encode(v T) ([]byte, error) { return strconv.AppendBool(nil, bool(v)), nil }

// Decode parses a boolean.
func (Bool[T]) Decode(data []byte) (T, error) {
	b, err := strconv.ParseBool(string(data))
	if err != nil {
		return false, decodeErr[T]("bool", err)
	}
	return T(b), nil
}

// Signed lists the integer kinds Int accepts.
type Signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Unsigned lists the integer kinds Uint accepts.
type Unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Floating lists the kinds Float accepts.
type Floating interface {
	~float32 | ~float64
}

// errRange reports a number that does not fit the target type.
var errRange = errors.New("value out of range")

// Int stores a signed integer in decimal.
type Int[T Signed] struct{}

// ContentType returns ContentTypeText.
func (Int[T]) ContentType() string { return ContentTypeText }

// Encode returns v in decimal.
func (Int[T]) Encode(v T) ([]byte, error) { return strconv.AppendInt(nil, int64(v), 10), nil }

// Decode parses a decimal integer that fits in T.
func (Int[T]) Decode(data []byte) (T, error) {
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err == nil && int64(T(n)) != n {
		err = errRange
	}
	if err != nil {
		return 0, decodeErr[T]("int", err)
	}
	return T(n), nil
}

// Uint stores an unsigned integer in decimal.
type Uint[T Unsigned] struct{}

// ContentType returns ContentTypeText.
func (Uint[T]) ContentType() string { return ContentTypeText }

// Encode returns v in decimal.
func (Uint[T]) Encode(v T) ([]byte, error) { return strconv.AppendUint(nil, uint64(v), 10), nil }

// Decode parses a decimal unsigned integer that fits in T.
func (Uint[T]) Decode(data []byte) (T, error) {
	n, err := strconv.ParseUint(string(data), 10, 64)
	if err == nil && uint64(T(n)) != n {
		err = errRange
	}
	if err != nil {
		return 0, decodeErr[T]("uint", err)
	}
	return T(n), nil
}

// Float stores a floating-point number in the shortest decimal form that
// reads back as the same value ("21.5", "1e+21", "NaN", "+Inf", "-0").
type Float[T Floating] struct{}

// ContentType returns ContentTypeText.
func (Float[T]) ContentType() string { return ContentTypeText }

func floatBits[T Floating]() int {
	var zero T
	return int(unsafe.Sizeof(zero)) * 8
}

// Encode returns the shortest round-tripping decimal form of v.
func (Float[T]) Encode(v T) ([]byte, error) {
	return strconv.AppendFloat(nil, float64(v), 'g', -1, floatBits[T]()), nil
}

// Decode parses a floating-point number that fits in T.
func (Float[T]) Decode(data []byte) (T, error) {
	f, err := strconv.ParseFloat(string(data), floatBits[T]())
	if err != nil {
		return 0, decodeErr[T]("float", err)
	}
	return T(f), nil
}

// Time stores an instant as RFC 3339 with nanoseconds, always in UTC
// ("2026-11-22T02:17:56.123456789Z"). Converting to UTC makes equal instants
// encode equally whatever their location, so value comparisons work; the
// decoded time is in UTC and Equal to the encoded one. Years outside
// 0000-9999 cannot be written in RFC 3339 and fail to encode.
type Time struct{}

// ContentType returns ContentTypeText.
func (Time) ContentType() string { return ContentTypeText }

// Encode returns v in UTC as RFC 3339 with nanoseconds.
func (Time) Encode(v time.Time) ([]byte, error) {
	b, err := v.UTC().MarshalText()
	if err != nil {
		return nil, encodeErr[time.Time]("time", err)
	}
	return b, nil
}

// Decode parses an RFC 3339 time with any offset (fractional seconds
// optional) and returns it in UTC.
func (Time) Decode(data []byte) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, string(data))
	if err != nil {
		return time.Time{}, decodeErr[time.Time]("time", err)
	}
	return t.UTC(), nil
}

// Duration stores a duration in Go's notation ("1h30m0s", "250ms").
type Duration struct{}

// ContentType returns ContentTypeText.
func (Duration) ContentType() string { return ContentTypeText }

// Encode returns v.String().
func (Duration) Encode(v time.Duration) ([]byte, error) { return []byte(v.String()), nil }

// Decode parses a Go duration ("90s", "1h30m", "-1.5h").
func (Duration) Decode(data []byte) (time.Duration, error) {
	d, err := time.ParseDuration(string(data))
	if err != nil {
		return 0, decodeErr[time.Duration]("duration", err)
	}
	return d, nil
}

// TextPointer is the constraint Text puts on its second type parameter: a
// pointer to T that can marshal and unmarshal text (the marshal method may
// have a value or a pointer receiver).
type TextPointer[T any] interface {
	*T
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// Text stores a value through its own encoding.TextMarshaler and
// encoding.TextUnmarshaler methods, e.g. Text[netip.Addr, *netip.Addr]{}.
// It is as deterministic as the type's MarshalText.
type Text[T any, P TextPointer[T]] struct{}

// ContentType returns ContentTypeText.
func (Text[T, P]) ContentType() string { return ContentTypeText }

// Encode calls MarshalText on a copy of v.
func (Text[T, P]) Encode(v T) ([]byte, error) {
	b, err := P(&v).MarshalText()
	if err != nil {
		return nil, encodeErr[T]("text", err)
	}
	return b, nil
}

// Decode calls UnmarshalText on a zero T.
func (Text[T, P]) Decode(data []byte) (T, error) {
	var v T
	if err := P(&v).UnmarshalText(data); err != nil {
		var zero T
		return zero, decodeErr[T]("text", err)
	}
	return v, nil
}
