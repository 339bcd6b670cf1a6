package migrate

import (
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

// FuzzDecodePos: a stored position (any bytes another client wrote under
// the reserved key) never panics, and a decoded one encodes back the same.
func FuzzDecodePos(f *testing.F) {
	for _, s := range []string{"0 ", "3 YWJj", "", " ", "-1 YQ==", "1 !!", "99999999999999999999 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, c, err := decodePos(b)
		if err != nil {
			return
		}
		d2, c2, err := decodePos(encodePos(d, c))
		if err != nil || d2 != d || c2 != c {
			t.Fatalf("%q: round trip gave %d %q %v", b, d2, c2, err)
		}
	})
}

func TestPositionRoundTrip(t *testing.T) {
	for _, c := range []runtime.Cursor{"", "abc", "a b\x00c"} {
		d, got, err := decodePos(encodePos(7, c))
		if err != nil || d != 7 || got != c {
			t.Fatalf("%q: %d %q %v", c, d, got, err)
		}
	}
}
