// Package codec turns typed values into the bytes stored under a state store
// key and back.
//
// Generated code picks one codec per key and references it as a zero-size
// value, for example codec.MsgPack[SetPoint]{} or codec.Float[float64]{}.
// Every codec is safe for concurrent use and deterministic: equal values
// encode to equal bytes. Determinism matters because the state store compares
// stored values byte for byte (SET NEX, VDEL) and the typed runtime compares
// encoded bytes in CompareAndSet; a codec that wrote map entries in a random
// order would make those comparisons fail at random.
//
// Decode failures are *DecodeError and encode failures *EncodeError; both
// match ErrDecode / ErrEncode with errors.Is and unwrap to their cause.
// When MsgPack or JSON fails on one part of a value, the error's Path names
// that part, from the type's name through the wire names of struct fields,
// slice indexes and map keys, and its cause is that part's own error:
//
//	codec: msgpack: cannot encode conveyor.LineConfig: LineConfig.target_state: "" is not a declared value of enum LineState
//
// Evolved wraps MsgPack or JSON for a type whose schema declares how its
// values evolve: it reads values written under earlier names, and fills
// defaults for fields they lack, as an Evolution describes.
//
// Versioned is the codec of a versioned type: it stamps each value with
// its version in the reserved field VersionField ("$v", the map's first
// entry) and decodes every declared version, converting earlier ones with
// the functions Upgrade and Downgrade wrap.
package codec

import (
	"errors"
	"reflect"
)

// Codec converts values of type T to and from stored bytes.
type Codec[T any] interface {
	// Encode returns the stored form of v. Equal values give equal bytes.
	Encode(v T) ([]byte, error)
	// Decode parses stored bytes. It never panics on malformed input and
	// does not retain data.
	Decode(data []byte) (T, error)
	// ContentType names the encoding as a MIME type, for documentation and
	// tooling; the wire protocol itself always says application/octet-stream.
	ContentType() string
}

// Content types reported by the codecs of this package.
const (
	ContentTypeMsgPack = "application/msgpack"
	ContentTypeJSON    = "application/json"
	ContentTypeText    = "text/plain; charset=utf-8"
	ContentTypeBytes   = "application/octet-stream"
)

var (
	// ErrDecode is matched by every *DecodeError.
	ErrDecode = errors.New("codec: cannot decode value")
	// ErrEncode is matched by every *EncodeError.
	ErrEncode = errors.New("codec: cannot encode value")
)

// DecodeError reports stored bytes that a codec could not turn into a value.
type DecodeError struct {
	Codec string // codec name, e.g. "msgpack", "int"
	Type  string // Go type that was being decoded
	// Path locates the failure when it lies in one part of the value:
	// "LineConfig.target_state", "Recipe.steps[2].state",
	// `Line.zones["north"]` (the type's name without its package, then
	// wire names, indexes and keys; a path of an unnamed type starts at
	// its first index or key). Empty when the value failed as a whole.
	Path string
	Err  error // the underlying cause: the failing part's own error when Path is set
}

func (e *DecodeError) Error() string {
	return "codec: " + e.Codec + ": cannot decode " + e.Type + ": " + withPath(e.Path, e.Err)
}

func withPath(path string, err error) string {
	if path == "" {
		return err.Error()
	}
	return path + ": " + err.Error()
}

// Unwrap returns the underlying cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports whether target is ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// EncodeError reports a value that a codec could not encode (for example a
// NaN in JSON, or a channel in msgpack).
type EncodeError struct {
	Codec string
	Type  string
	Path  string // as in DecodeError
	Err   error
}

func (e *EncodeError) Error() string {
	return "codec: " + e.Codec + ": cannot encode " + e.Type + ": " + withPath(e.Path, e.Err)
}

// Unwrap returns the underlying cause.
func (e *EncodeError) Unwrap() error { return e.Err }

// Is reports whether target is ErrEncode.
func (e *EncodeError) Is(target error) bool { return target == ErrEncode }

func typeName[T any]() string {
	return reflect.TypeFor[T]().String()
}

func decodeErr[T any](codec string, err error) error {
	return &DecodeError{Codec: codec, Type: typeName[T](), Err: err}
}

func encodeErr[T any](codec string, err error) error {
	return &EncodeError{Codec: codec, Type: typeName[T](), Err: err}
}

// encodeErrAt is encodeErr with the part of v that failed, when one did.
func encodeErrAt[T any](f *format, v T, err error) error {
	e := &EncodeError{Codec: f.tag, Type: typeName[T](), Err: err}
	if path, leaf := f.locateEncode(reflect.ValueOf(&v).Elem()); path != "" {
		e.Path, e.Err = path, leaf
	}
	return e
}

// decodeErrAt is decodeErr with the part of data that failed, when one did.
func decodeErrAt[T any](f *format, data []byte, err error) error {
	e := &DecodeError{Codec: f.tag, Type: typeName[T](), Err: err}
	if path, leaf := f.locateDecode(reflect.TypeFor[T](), data); path != "" {
		e.Path, e.Err = path, leaf
	}
	return e
}
