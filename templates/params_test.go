package templates

import (
	"testing"

	"github.com/ssgen/ssgen/schema"
)

func TestParameterNamesThatWouldShadowTheBodyGetASuffix(t *testing.T) {
	for name, want := range map[string]string{"id": "id", "s": "sParam", "err": "errParam", "string": "stringParam", "g": "gParam", "units": "unitsParam", "Mode": "ModeParam", "byte": "byteParam"} {
		if got := argName(&schema.Param{Name: name}, map[string]bool{"units": true}); got != want {
			t.Errorf("%s: got %s, want %s", name, got, want)
		}
	}
}
