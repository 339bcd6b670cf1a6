package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// VersionField is the reserved field that carries the version of a value
// of a versioned type (a schema type with version and previous). It is
// the first entry of the stored map, before the type's own fields; a
// reader that does not know versions ignores it as an unknown field. A
// stored value without it is of the oldest declared version. The schema
// refuses it as a field name.
const VersionField = "$v"

// MaxVersion bounds the version a schema may declare and a stamp may hold.
const MaxVersion = 1 << 16

// ErrVersion is matched (errors.Is) by the *VersionError of a stored
// value whose version this program does not read.
var ErrVersion = errors.New("codec: stored value has a version this program does not read")

// VersionError reports a stored value stamped with a version that no
// declared version of the type matches: written by a newer schema, or
// by a schema whose earlier versions this one no longer declares.
type VersionError struct {
	Type    string // the type's schema name
	Version int    // the stamped version
	Known   []int  // the versions this program reads, ascending
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s: stored value has version %d; this program reads versions %v (a newer schema wrote it: deploy readers that declare it first)", e.Type, e.Version, e.Known)
}

// Is matches ErrVersion.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// errStamp reports a malformed version stamp.
var errStamp = errors.New("malformed version stamp: " + VersionField + " must be an integer from 1 to " + strconv.Itoa(MaxVersion))

// Versioned is the codec of a versioned type T. Encode writes the value
// as version Write, stamped with it (VersionField, first entry of the
// map); Decode reads the stamp (none: version Oldest) and decodes with
// that version's function in Decoders, which converts to T. Generated
// code builds one per key whose type is versioned.
type Versioned[T any] struct {
	Name   string // the type's schema name, for errors
	JSON   bool   // the encoding is JSON; otherwise MessagePack
	Write  int    // the version Encode writes
	Oldest int    // the version of a stored value without a stamp
	// EncodeAs encodes v as version Write, without the stamp.
	EncodeAs func(v T) ([]byte, error)
	// Decoders decodes, for each declared version, the stored bytes of
	// that version and converts the value to T.
	Decoders map[int]func(data []byte) (T, error)
}

// ContentType returns the content type of the encoding.
func (c Versioned[T]) ContentType() string {
	if c.JSON {
		return ContentTypeJSON
	}
	return ContentTypeMsgPack
}

func (c Versioned[T]) codecName() string {
	if c.JSON {
		return "json"
	}
	return "msgpack"
}

// Encode encodes v as version Write and stamps it.
func (c Versioned[T]) Encode(v T) ([]byte, error) {
	data, err := c.EncodeAs(v)
	if err != nil {
		return nil, err
	}
	out, err := StampVersion(data, c.JSON, c.Write)
	if err != nil {
		return nil, &EncodeError{Codec: c.codecName(), Type: typeName[T](), Err: err}
	}
	return out, nil
}

// Decode reads the version of data and decodes it as that version.
func (c Versioned[T]) Decode(data []byte) (T, error) {
	var zero T
	v, ok, err := ReadVersion(data, c.JSON)
	if err != nil {
		return zero, &DecodeError{Codec: c.codecName(), Type: typeName[T](), Err: err}
	}
	if !ok {
		v = c.Oldest
	}
	dec := c.Decoders[v]
	if dec == nil {
		known := make([]int, 0, len(c.Decoders))
		for k := range c.Decoders {
			known = append(known, k)
		}
		sort.Ints(known)
		return zero, &DecodeError{Codec: c.codecName(), Type: typeName[T](), Err: &VersionError{Type: c.Name, Version: v, Known: known}}
	}
	return dec(data)
}

// Current returns the bytes the stored value data encodes to today.
func (c Versioned[T]) Current(data []byte) ([]byte, error) {
	v, err := c.Decode(data)
	if err != nil {
		return nil, err
	}
	return c.Encode(v)
}

// StampVersion returns data, one encoded map (MessagePack, or JSON when
// json is set) without a stamp, with VersionField: version inserted as
// its first entry. The result is deterministic: the same data and
// version give the same bytes.
func StampVersion(data []byte, json bool, version int) ([]byte, error) {
	if version < 1 || version > MaxVersion {
		return nil, errStamp
	}
	if json {
		i := skipJSONSpace(data, 0)
		if i >= len(data) || data[i] != '{' {
			return nil, errors.New("a versioned value must encode to a JSON object")
		}
		out := make([]byte, 0, len(data)+16)
		out = append(out, `{"`+VersionField+`":`...)
		out = strconv.AppendInt(out, int64(version), 10)
		rest := data[i+1:]
		if j := skipJSONSpace(rest, 0); j < len(rest) && rest[j] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...), nil
	}
	n, hdr, err := mpMapHeader(data)
	if err != nil {
		return nil, err
	}
	if n >= 0xffffffff {
		return nil, errors.New("map too large to stamp")
	}
	out := make([]byte, 0, len(data)+12)
	n++
	switch {
	case n < 16:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = append(out, 0xde, byte(n>>8), byte(n))
	default:
		out = append(out, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	out = append(out, 0xa0|byte(len(VersionField)))
	out = append(out, VersionField...)
	if version < 128 {
		out = append(out, byte(version))
	} else if version <= 0xff {
		out = append(out, 0xcc, byte(version))
	} else if version <= 0xffff {
		out = append(out, 0xcd, byte(version>>8), byte(version))
	} else {
		out = append(out, 0xce, byte(version>>24), byte(version>>16), byte(version>>8), byte(version))
	}
	return append(out, data[hdr:]...), nil
}

// mpMapHeader returns the entry count of the MessagePack map data starts
// with and the header's length.
func mpMapHeader(data []byte) (n, hdr int, err error) {
	if len(data) == 0 {
		return 0, 0, errors.New("empty value")
	}
	switch b := data[0]; {
	case b&0xf0 == 0x80:
		return int(b & 0x0f), 1, nil
	case b == 0xde && len(data) >= 3:
		return int(data[1])<<8 | int(data[2]), 3, nil
	case b == 0xdf && len(data) >= 5:
		return int(data[1])<<24 | int(data[2])<<16 | int(data[3])<<8 | int(data[4]), 5, nil
	}
	return 0, 0, errors.New("a versioned value must encode to a MessagePack map")
}

// ReadVersion reads the version stamp of data, one stored value of a
// versioned type: ok is false when its first map entry is not
// VersionField (a value written before the type was versioned, or not a
// map: the version's decoder then judges it). A stamp that is not an
// integer from 1 to MaxVersion is an error. Only the stamp is read; the
// rest of data is not checked.
func ReadVersion(data []byte, json bool) (version int, ok bool, err error) {
	if json {
		return readJSONVersion(data)
	}
	n, i, err := mpMapHeader(data)
	if err != nil || n == 0 || i >= len(data) {
		return 0, false, nil
	}
	// The key: a string of any MessagePack string form.
	var klen int
	switch b := data[i]; {
	case b&0xe0 == 0xa0:
		klen, i = int(b&0x1f), i+1
	case b == 0xd9 && i+1 < len(data):
		klen, i = int(data[i+1]), i+2
	case b == 0xda && i+2 < len(data):
		klen, i = int(data[i+1])<<8|int(data[i+2]), i+3
	default:
		return 0, false, nil
	}
	if klen != len(VersionField) || i+klen > len(data) || string(data[i:i+klen]) != VersionField {
		return 0, false, nil
	}
	i += klen
	if i >= len(data) {
		return 0, false, errStamp
	}
	var v uint64
	b := data[i]
	size := 0
	switch {
	case b < 0x80:
		v = uint64(b)
	case b == 0xcc || b == 0xd0:
		size = 1
	case b == 0xcd || b == 0xd1:
		size = 2
	case b == 0xce || b == 0xd2:
		size = 4
	case b == 0xcf || b == 0xd3:
		size = 8
	default:
		return 0, false, errStamp
	}
	if size > 0 {
		if i+1+size > len(data) {
			return 0, false, errStamp
		}
		for _, c := range data[i+1 : i+1+size] {
			v = v<<8 | uint64(c)
		}
		// A signed form with its top bit set is negative.
		if b >= 0xd0 && data[i+1]&0x80 != 0 {
			return 0, false, errStamp
		}
	}
	if v < 1 || v > MaxVersion {
		return 0, false, errStamp
	}
	return int(v), true, nil
}

func readJSONVersion(data []byte) (int, bool, error) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false, nil
	}
	i = skipJSONSpace(data, i+1)
	end, ok := jsonStringEnd(data, i)
	if !ok {
		return 0, false, nil // no member, or not JSON: the codec says what is wrong
	}
	// The member's name as JSON reads it: "\u0024v" is "$v" too.
	var name string
	if string(data[i:end]) != `"`+VersionField+`"` && (json.Unmarshal(data[i:end], &name) != nil || name != VersionField) {
		return 0, false, nil
	}
	i = skipJSONSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return 0, false, errStamp
	}
	i = skipJSONSpace(data, i+1)
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' && i-start < 8 {
		i++
	}
	if i == start || (i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E' || data[i] >= '0' && data[i] <= '9')) || data[start] == '0' {
		return 0, false, errStamp
	}
	v, err := strconv.Atoi(string(data[start:i]))
	if err != nil || v < 1 || v > MaxVersion {
		return 0, false, errStamp
	}
	return v, true, nil
}

// jsonStringEnd returns the index just past the JSON string that starts at
// data[i], and false when none starts there or it does not end.
func jsonStringEnd(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// Upgrade returns the decoder of an earlier version Old of a versioned
// type New, for Versioned.Decoders: it decodes with c, fills a New with
// copyShared (the fields both versions share, generated) and lets convert
// (written by the user) set the rest. A convert error fails the decode.
func Upgrade[Old, New any](c Codec[Old], copyShared func(Old) New, convert func(from Old, to *New) error) func([]byte) (New, error) {
	return func(data []byte) (New, error) {
		var zero New
		old, err := c.Decode(data)
		if err != nil {
			return zero, err
		}
		v := copyShared(old)
		if err := convert(old, &v); err != nil {
			return zero, &DecodeError{Codec: "version", Type: typeName[New](), Err: fmt.Errorf("converting from %s: %w", typeName[Old](), err)}
		}
		return v, nil
	}
}

// Downgrade returns the encoder of a versioned type New as its earlier
// version Old, for Versioned.EncodeAs when the schema's write_version is
// Old's: copyShared fills the fields both share, convert sets the rest, c
// encodes the result. A convert error fails the encode.
func Downgrade[New, Old any](c Codec[Old], copyShared func(New) Old, convert func(from New, to *Old) error) func(New) ([]byte, error) {
	return func(v New) ([]byte, error) {
		old := copyShared(v)
		if err := convert(v, &old); err != nil {
			return nil, &EncodeError{Codec: "version", Type: typeName[New](), Err: fmt.Errorf("converting to %s: %w", typeName[Old](), err)}
		}
		return c.Encode(old)
	}
}
