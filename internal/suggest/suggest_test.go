package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"flaot64", []string{"float32", "float64", "string"}, ` (did you mean "float64"?)`},
		{"alfa", []string{"zeta", "alpha", "when"}, ` (did you mean "alpha"?)`},
		{"cold", []string{"heat", "cool", "off"}, ` (did you mean "cool"?)`},
		{"Msgpack", []string{"msgpack", "json"}, ` (did you mean "msgpack"?)`},
		{"gett", []string{"get", "set", "keys"}, ` (did you mean "get"?)`},
		{"Foo", []string{"bool", "int"}, ""},
		{"Nope", []string{"T.B", "Edit"}, ""},
		{"same", []string{"same"}, ""},
		{"", []string{"a"}, ""},
		{string(make([]byte, 100)), []string{string(make([]byte, 99))}, ""},
	} {
		if got := DidYouMean(tc.name, tc.candidates); got != tc.want {
			t.Errorf("DidYouMean(%q, %q) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
