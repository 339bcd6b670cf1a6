package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

// color is an enum shaped as generated code declares one.
type color string

func (c color) Valid() bool { return c == "red" || c == "blue" }

func TestEnumHelpersAcceptDeclaredValuesOnly(t *testing.T) {
	if v, err := runtime.ParseEnum[color]("red"); err != nil || v != "red" {
		t.Fatalf("ParseEnum(red) = %q, %v", v, err)
	}
	if err := runtime.CheckEnum(color("blue")); err != nil {
		t.Fatalf("CheckEnum(blue) = %v", err)
	}
	dst := color("blue")
	if err := runtime.SetEnum(&dst, "red"); err != nil || dst != "red" {
		t.Fatalf("SetEnum(red) = %v, left %q", err, dst)
	}
	for name, err := range map[string]error{
		"ParseEnum": func() error { _, err := runtime.ParseEnum[color]("green"); return err }(),
		"CheckEnum": runtime.CheckEnum(color("green")),
		"SetEnum":   runtime.SetEnum(&dst, "green"),
	} {
		var ee *runtime.EnumError
		if !errors.As(err, &ee) || ee.Type != "color" || ee.Value != "green" || !errors.Is(err, runtime.ErrInvalidEnum) {
			t.Errorf("%s(green) = %v, want an *EnumError of color", name, err)
		}
	}
	if dst != "red" {
		t.Errorf("a refused SetEnum changed the value to %q", dst)
	}
	long := strings.Repeat("x", 100)
	if msg := runtime.CheckEnum(color(long)).Error(); len(msg) > 150 {
		t.Errorf("error for a 100-byte value is %d bytes: the value is not cut short", len(msg))
	}
}

func TestSetEnumRenamedReadsEarlierSpellings(t *testing.T) {
	renamed := map[string]color{"scarlet": "red"}
	var c color
	if err := runtime.SetEnumRenamed(&c, "scarlet", renamed); err != nil || c != "red" {
		t.Fatalf("earlier spelling: %q, %v", c, err)
	}
	if err := runtime.SetEnumRenamed(&c, "blue", renamed); err != nil || c != "blue" {
		t.Fatalf("current spelling: %q, %v", c, err)
	}
	if err := runtime.SetEnumRenamed(&c, "crimson", renamed); !errors.Is(err, runtime.ErrInvalidEnum) || c != "blue" {
		t.Fatalf("undeclared: %q, %v", c, err)
	}
}
