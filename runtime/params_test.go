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

func TestParseIntParamAcceptsOnlyWhatAnAccessorRenders(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"0", true}, {"127", true}, {"-128", true}, {"128", false}, {"-129", false},
		{"007", false}, {"+7", false}, {"-0", false}, {"", false}, {"1e2", false}, {" 1", false},
	} {
		v, err := runtime.ParseIntParam[int8]("n", c.s)
		if (err == nil) != c.ok {
			t.Errorf("ParseIntParam[int8](%q) = %d, %v", c.s, v, err)
		}
		if err != nil && !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Errorf("ParseIntParam[int8](%q): %v is not ErrInvalidArgument", c.s, err)
		}
	}
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"0", true}, {"65535", true}, {"65536", false}, {"-1", false}, {"01", false}, {"+1", false},
	} {
		if v, err := runtime.ParseUintParam[uint16]("n", c.s); (err == nil) != c.ok {
			t.Errorf("ParseUintParam[uint16](%q) = %d, %v", c.s, v, err)
		}
	}
	if v, err := runtime.ParseUintParam[uint64]("n", "18446744073709551615"); err != nil || v != 1<<64-1 {
		t.Errorf("max uint64: %d, %v", v, err)
	}
}
