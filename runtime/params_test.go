package runtime_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

func TestCheckParamRefusesValuesThatCannotFillASegment(t *testing.T) {
	lower := regexp.MustCompile(`^(?:[a-z]+)$`)
	cases := []struct {
		value   string
		pattern *regexp.Regexp
		reason  string // "" when accepted
	}{
		{"kitchen", nil, ""},
		{"kitchen", lower, ""},
		{"", nil, "empty"},
		{"a/b", nil, "contains '/'"},
		{"Kitchen", lower, "does not match ^(?:[a-z]+)$"},
	}
	for _, tc := range cases {
		err := runtime.CheckParam("id", tc.value, tc.pattern)
		var pe *runtime.ParamError
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("CheckParam(%q) = %v, want nil", tc.value, err)
		case tc.reason != "" && (!errors.As(err, &pe) || pe.Param != "id" || pe.Value != tc.value || pe.Reason != tc.reason):
			t.Errorf("CheckParam(%q) = %#v, want a ParamError with reason %q", tc.value, err, tc.reason)
		case tc.reason != "" && !errors.Is(err, runtime.ErrInvalidArgument):
			t.Errorf("CheckParam(%q) = %v, does not match ErrInvalidArgument", tc.value, err)
		}
	}
	if err := runtime.CheckEnumParam("mode", "heat", true); err != nil {
		t.Fatal(err)
	}
	var pe *runtime.ParamError
	if err := runtime.CheckEnumParam("mode", "warm", false); !errors.As(err, &pe) || pe.Reason != "not a declared value" {
		t.Fatalf("CheckEnumParam = %v", err)
	}
}
