package runtime

import (
	"regexp"
	"strconv"
	"strings"
)

// ParamError reports a parameter of a generated accessor whose value cannot
// fill its path segment: empty, containing '/', or not matching the
// parameter's pattern. It matches ErrInvalidArgument: nothing was sent.
type ParamError struct {
	Param  string // the parameter's name in the schema
	Value  string // the refused value, rendered
	Reason string // "empty", "contains '/'", "does not match ^(?:...)$"
}

func (e *ParamError) Error() string {
	return "statestore: parameter " + e.Param + " " + quoteValue(e.Value) + ": " + e.Reason
}

// Is matches ErrInvalidArgument.
func (e *ParamError) Is(target error) bool { return target == ErrInvalidArgument }

// CheckParam refuses, with a *ParamError, a string parameter of a
// generated accessor that cannot fill one path segment: an empty value, one
// holding '/' (it would spill into the next segment and could name another
// key), or one pattern (when not nil) does not match.
func CheckParam(name, value string, pattern *regexp.Regexp) error {
	switch {
	case value == "":
		return &ParamError{Param: name, Value: value, Reason: "empty"}
	case strings.Contains(value, "/"):
		return &ParamError{Param: name, Value: value, Reason: "contains '/'"}
	case pattern != nil && !pattern.MatchString(value):
		return &ParamError{Param: name, Value: value, Reason: "does not match " + pattern.String()}
	}
	return nil
}

// CheckEnumParam refuses, with a *ParamError, an enum parameter of a
// generated accessor that is not one of its declared values.
func CheckEnumParam(name, value string, valid bool) error {
	if !valid {
		return &ParamError{Param: name, Value: value, Reason: "not a declared value"}
	}
	return nil
}

// signedInt and unsignedInt are the parameter types ParseIntParam and
// ParseUintParam read.
type signedInt interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

type unsignedInt interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// ParseIntParam reads a signed integer parameter from a key segment. It
// accepts exactly what an accessor renders (decimal, no '+', no leading
// zeros, "-0" refused) and refuses values out of T's range, with a
// *ParamError, so a listed key maps back to the one handle that names it.
func ParseIntParam[T signedInt](name, s string) (T, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || int64(T(v)) != v || strconv.FormatInt(v, 10) != s {
		return 0, &ParamError{Param: name, Value: s, Reason: "not a canonical decimal in range"}
	}
	return T(v), nil
}

// ParseUintParam is ParseIntParam for unsigned integers.
func ParseUintParam[T unsignedInt](name, s string) (T, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || uint64(T(v)) != v || strconv.FormatUint(v, 10) != s {
		return 0, &ParamError{Param: name, Value: s, Reason: "not a canonical decimal in range"}
	}
	return T(v), nil
}

// quoteValue quotes a refused value for an error message, cut short so a
// huge argument does not flood logs.
func quoteValue(s string) string {
	const limit = 64
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}
