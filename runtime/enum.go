package runtime

import "errors"

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
