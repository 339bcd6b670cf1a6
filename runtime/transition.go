package runtime

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// ErrTransition matches every *TransitionError (errors.Is): a write that
// a schema's transition rules (immutable, monotonic) forbid.
var ErrTransition = errors.New("statestore: transition rule broken")

// The rules a TransitionError names.
const (
	RuleImmutable     = "immutable"
	RuleIncreasing    = "monotonic increasing"
	RuleNonDecreasing = "monotonic non_decreasing"
)

// TransitionError is a write refused, before it was sent, because it
// breaks a transition rule of the schema: it would change or drop an
// immutable field, or move a monotonic one the wrong way. CompareAndSet,
// SetIfVersion and Update check the rules of generated keys against the
// value they read; a blind Set cannot (it reads nothing) and does not.
type TransitionError struct {
	Key string
	// Path locates the field, in the vocabulary of codec's paths: the
	// type's name, then wire names ("Device.serial", "Meter.info.since").
	Path string
	// Rule is RuleImmutable, RuleIncreasing or RuleNonDecreasing.
	Rule string
	// Old and New are the field's values (nil when the field is absent).
	Old, New any
}

// maxValueText bounds a value in the error's text: values come from the
// store, where anyone may have written them.
const maxValueText = 64

func (e *TransitionError) Error() string {
	return fmt.Sprintf("statestore: key %q: %s: %s: %s -> %s", clipText(e.Key), e.Path, e.Rule, valueText(e.Old), valueText(e.New))
}

// Is makes errors.Is(err, ErrTransition) hold.
func (e *TransitionError) Is(target error) bool { return target == ErrTransition }

func valueText(v any) string {
	if v == nil {
		return "absent"
	}
	switch x := v.(type) {
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		return clipText(fmt.Sprintf("%x", x))
	case string:
		return clipText(fmt.Sprintf("%q", x))
	}
	return clipText(fmt.Sprint(v))
}

func clipText(s string) string {
	if len(s) <= maxValueText {
		return s
	}
	cut := maxValueText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// TransitionCheck judges a write of new over old, for a key whose type
// has transition rules: nil, or a *TransitionError (Key left empty; the
// key fills it in). Generated code builds one per struct type with rules
// and gives it to NewKey with Transitions.
type TransitionCheck[T any] func(old, new *T) error

// Transitions makes CompareAndSet, SetIfVersion and Update of the key
// refuse a write that check refuses, before sending it. check must be a
// TransitionCheck of the key's value type (generated code passes one);
// NewKey ignores one of another type.
func Transitions[T any](check TransitionCheck[T]) KeyOption {
	return func(c *keyConfig) { c.transitions = check }
}

// checkTransition runs the key's transition check on a write of new over
// the stored value old (found false: none, and every write passes).
func (k *Key[T]) checkTransition(old *T, found bool, new *T) error {
	if k.transitions == nil || !found {
		return nil
	}
	err := k.transitions(old, new)
	var te *TransitionError
	if errors.As(err, &te) && te.Key == "" {
		te.Key = string(k.name)
	}
	return err
}

// The helpers below are what generated transition checks call, one per
// field with a rule. old and new point at the field's value, nil when the
// field is absent (an optional field left out, or a struct on its path
// absent). A field absent before may be set to anything; a field present
// before must stay present.

// CheckImmutable refuses a change of an immutable field's value: equal
// says whether two values are the same (Same, SameBytes, SameTime).
func CheckImmutable[V any](path string, old, new *V, equal func(a, b V) bool) error {
	switch {
	case old == nil:
		return nil
	case new == nil:
		return &TransitionError{Path: path, Rule: RuleImmutable, Old: *old}
	case !equal(*old, *new):
		return &TransitionError{Path: path, Rule: RuleImmutable, Old: *old, New: *new}
	}
	return nil
}

// CheckMonotonic refuses a move of a monotonic field the wrong way:
// strict is increasing (new > old), else non_decreasing (new >= old).
// compare orders two values and reports false when they have no order
// (a NaN), which no rule accepts.
func CheckMonotonic[V any](path string, strict bool, old, new *V, compare func(a, b V) (int, bool)) error {
	rule := RuleNonDecreasing
	if strict {
		rule = RuleIncreasing
	}
	switch {
	case old == nil:
		return nil
	case new == nil:
		return &TransitionError{Path: path, Rule: rule, Old: *old}
	}
	c, ok := compare(*new, *old)
	if !ok || c < 0 || strict && c == 0 {
		return &TransitionError{Path: path, Rule: rule, Old: *old, New: *new}
	}
	return nil
}

// Same is == for CheckImmutable.
func Same[V comparable](a, b V) bool { return a == b }

// SameBytes is bytes.Equal for CheckImmutable.
func SameBytes(a, b []byte) bool { return bytes.Equal(a, b) }

// SameTime is time.Time.Equal (the same instant) for CheckImmutable.
func SameTime(a, b time.Time) bool { return a.Equal(b) }

// Order compares numbers and durations for CheckMonotonic; a NaN has no
// order.
func Order[V cmp.Ordered](a, b V) (int, bool) {
	if a != a || b != b { // only a NaN is unequal to itself
		return 0, false
	}
	return cmp.Compare(a, b), true
}

// OrderTime compares instants for CheckMonotonic.
func OrderTime(a, b time.Time) (int, bool) { return a.Compare(b), true }

// Present returns p, or nil when absent: for a required field of a
// struct that is itself absent.
func Present[V any](absent bool, p *V) *V {
	if absent {
		return nil
	}
	return p
}

// NonZero returns p, or nil when *p is the zero value: an optional field
// left out of the stored value reads as its zero value.
func NonZero[V comparable](p *V) *V {
	var zero V
	if *p == zero {
		return nil
	}
	return p
}

// NonEmpty is NonZero for bytes.
func NonEmpty(p *[]byte) *[]byte {
	if len(*p) == 0 {
		return nil
	}
	return p
}
