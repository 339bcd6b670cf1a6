package runtime

import (
	"errors"
	"reflect"
)

// ErrInvalidEnum is matched by every *EnumError.
var ErrInvalidEnum = errors.New("statestore: not a declared enum value")

// EnumError reports a value that is not one of an enum's declared values,
// met while parsing, encoding or decoding a generated enum type.
type EnumError struct {
	Type  string // the enum's name in the schema
	Value string
}

func (e *EnumError) Error() string {
	return quoteValue(e.Value) + " is not a declared value of enum " + e.Type
}

// Is matches ErrInvalidEnum.
func (e *EnumError) Is(target error) bool { return target == ErrInvalidEnum }

// Enum is what generated enum types are: a string type whose Valid method
// reports whether a value is one of the declared ones. The helpers below
// are the enums' parsing and checking, written once; generated methods
// call them.
type Enum interface {
	~string
	Valid() bool
}

// ParseEnum returns s as an E, or an *EnumError when s is not one of E's
// declared values.
func ParseEnum[E Enum](s string) (E, error) {
	if v := E(s); v.Valid() {
		return v, nil
	}
	return "", enumError[E](s)
}

// CheckEnum returns an *EnumError when v is not one of E's declared
// values, and nil when it is.
func CheckEnum[E Enum](v E) error {
	if v.Valid() {
		return nil
	}
	return enumError[E](string(v))
}

// SetEnum stores s in *dst when it is one of E's declared values, and
// otherwise returns an *EnumError and leaves *dst unchanged.
func SetEnum[E Enum](dst *E, s string) error {
	v, err := ParseEnum[E](s)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// enumError names E by its Go type name, which generated code makes the
// enum's name in the schema.
func enumError[E Enum](value string) error {
	return &EnumError{Type: reflect.TypeFor[E]().Name(), Value: value}
}

// SetEnumRenamed is SetEnum for an enum with earlier spellings: s, when
// it is a key of renamed, stores the value it was renamed to. Generated
// decoders of an enum whose values declare renamed_from call it, so that
// values stored with an old spelling still read; encoders write the
// current spelling.
func SetEnumRenamed[E Enum](dst *E, s string, renamed map[string]E) error {
	if v, ok := renamed[s]; ok {
		*dst = v
		return nil
	}
	return SetEnum(dst, s)
}
