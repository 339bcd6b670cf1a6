package templates

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

func TestDurationsAreSpelledInTheLargestUnitThatDividesThem(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "10 * time.Second"},
		{90 * time.Second, "90 * time.Second"},
		{2 * time.Hour, "2 * time.Hour"},
		{time.Hour + 2*time.Minute + 3*time.Second, "3723 * time.Second"},
		{500 * time.Millisecond, "500 * time.Millisecond"},
		{1500 * time.Microsecond, "1500 * time.Microsecond"},
		{7, "7 * time.Nanosecond"},
	}
	for _, tt := range tests {
		got := fmt.Sprintf("%#v", jen.Add(durationExpr(tt.d)))
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestCommentsWrapAtSpacesAndKeepTheAuthorsLineBreaks(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, line := range wrap(long) {
		if len(line) > wrapWidth {
			t.Errorf("line of %d bytes: %q", len(line), line)
		}
	}
	if got := wrap("first\nsecond"); len(got) != 2 {
		t.Errorf("author's break lost: %q", got)
	}
	unbreakable := strings.Repeat("x", 100)
	if got := wrap(unbreakable); len(got) != 1 || got[0] != unbreakable {
		t.Errorf("a single long word was split: %q", got)
	}
}

func TestParameterNamesThatWouldShadowTheBodyGetASuffix(t *testing.T) {
	for name, want := range map[string]string{"id": "id", "s": "sParam", "err": "errParam", "string": "stringParam", "g": "gParam", "units": "unitsParam", "Mode": "ModeParam", "byte": "byteParam"} {
		if got := argName(&schema.Param{Name: name}, map[string]bool{"units": true}); got != want {
			t.Errorf("%s: got %s, want %s", name, got, want)
		}
	}
}
