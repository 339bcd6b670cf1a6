package runtime_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

func ptr[V any](v V) *V { return &v }

func TestTransitionHelpersJudgeEachRule(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name string
		err  error
		rule string // "" when fine
	}{
		{"immutable absent -> set", runtime.CheckImmutable("T.a", nil, ptr("x"), runtime.Same[string]), ""},
		{"immutable absent -> absent", runtime.CheckImmutable[string]("T.a", nil, nil, runtime.Same[string]), ""},
		{"immutable same", runtime.CheckImmutable("T.a", ptr("x"), ptr("x"), runtime.Same[string]), ""},
		{"immutable changed", runtime.CheckImmutable("T.a", ptr("x"), ptr("y"), runtime.Same[string]), runtime.RuleImmutable},
		{"immutable dropped", runtime.CheckImmutable("T.a", ptr("x"), nil, runtime.Same[string]), runtime.RuleImmutable},
		{"immutable bytes same", runtime.CheckImmutable("T.b", ptr([]byte{1}), ptr([]byte{1}), runtime.SameBytes), ""},
		{"immutable bytes changed", runtime.CheckImmutable("T.b", ptr([]byte{1}), ptr([]byte{2}), runtime.SameBytes), runtime.RuleImmutable},
		{"immutable time same instant", runtime.CheckImmutable("T.t", ptr(t0), ptr(t0.In(time.FixedZone("z", -3600))), runtime.SameTime), ""},
		{"immutable time moved", runtime.CheckImmutable("T.t", ptr(t0), ptr(t0.Add(1)), runtime.SameTime), runtime.RuleImmutable},
		{"increasing up", runtime.CheckMonotonic("T.n", true, ptr(1), ptr(2), runtime.Order[int]), ""},
		{"increasing equal", runtime.CheckMonotonic("T.n", true, ptr(1), ptr(1), runtime.Order[int]), runtime.RuleIncreasing},
		{"increasing down", runtime.CheckMonotonic("T.n", true, ptr(1), ptr(0), runtime.Order[int]), runtime.RuleIncreasing},
		{"non_decreasing equal", runtime.CheckMonotonic("T.n", false, ptr(1), ptr(1), runtime.Order[int]), ""},
		{"non_decreasing down", runtime.CheckMonotonic("T.n", false, ptr(uint8(1)), ptr(uint8(0)), runtime.Order[uint8]), runtime.RuleNonDecreasing},
		{"monotonic absent -> set", runtime.CheckMonotonic("T.n", true, nil, ptr(-5), runtime.Order[int]), ""},
		{"monotonic dropped", runtime.CheckMonotonic("T.n", false, ptr(5), nil, runtime.Order[int]), runtime.RuleNonDecreasing},
		{"float up", runtime.CheckMonotonic("T.f", true, ptr(1.5), ptr(1.75), runtime.Order[float64]), ""},
		{"float NaN new", runtime.CheckMonotonic("T.f", false, ptr(1.5), ptr(math.NaN()), runtime.Order[float64]), runtime.RuleNonDecreasing},
		{"float NaN old", runtime.CheckMonotonic("T.f", false, ptr(math.NaN()), ptr(2.0), runtime.Order[float64]), runtime.RuleNonDecreasing},
		{"float -Inf -> +Inf", runtime.CheckMonotonic("T.f", true, ptr(math.Inf(-1)), ptr(math.Inf(1)), runtime.Order[float64]), ""},
		{"duration down", runtime.CheckMonotonic("T.d", false, ptr(time.Second), ptr(time.Millisecond), runtime.Order[time.Duration]), runtime.RuleNonDecreasing},
		{"time later", runtime.CheckMonotonic("T.t", true, ptr(t0), ptr(t0.Add(1)), runtime.OrderTime), ""},
		{"time same instant, increasing", runtime.CheckMonotonic("T.t", true, ptr(t0), ptr(t0.In(time.FixedZone("z", 7200))), runtime.OrderTime), runtime.RuleIncreasing},
		{"time earlier", runtime.CheckMonotonic("T.t", false, ptr(t0), ptr(t0.Add(-1)), runtime.OrderTime), runtime.RuleNonDecreasing},
		{"optional zero is absent", runtime.CheckMonotonic("T.n", false, runtime.NonZero(ptr(0)), runtime.NonZero(ptr(-3)), runtime.Order[int]), ""},
		{"optional set -> zero is dropped", runtime.CheckImmutable("T.s", runtime.NonZero(ptr("a")), runtime.NonZero(ptr("")), runtime.Same[string]), runtime.RuleImmutable},
		{"optional empty bytes is absent", runtime.CheckImmutable("T.b", runtime.NonEmpty(ptr([]byte{})), runtime.NonEmpty(ptr([]byte{9})), runtime.SameBytes), ""},
		{"required under an absent struct is absent", runtime.CheckImmutable("T.s", ptr("a"), runtime.Present(true, ptr("a")), runtime.Same[string]), runtime.RuleImmutable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rule == "" {
				if tt.err != nil {
					t.Fatalf("got %v, want nil", tt.err)
				}
				return
			}
			var te *runtime.TransitionError
			if !errors.As(tt.err, &te) || !errors.Is(tt.err, runtime.ErrTransition) || te.Rule != tt.rule {
				t.Fatalf("got %v, want a %s TransitionError", tt.err, tt.rule)
			}
		})
	}
}

func TestTransitionErrorTextIsBoundedAndNamesKeyPathRuleAndValues(t *testing.T) {
	err := &runtime.TransitionError{Key: "k", Path: "T.a", Rule: runtime.RuleImmutable, Old: strings.Repeat("é", 500), New: nil}
	msg := err.Error()
	if len(msg) > 200 || !strings.Contains(msg, `key "k": T.a: immutable: "`) || !strings.HasSuffix(msg, "-> absent") {
		t.Fatalf("%d bytes: %s", len(msg), msg)
	}
	if !errors.Is(err, runtime.ErrTransition) || errors.Is(err, runtime.ErrNotFound) {
		t.Fatal("errors.Is")
	}
}
