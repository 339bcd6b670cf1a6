package codec

import (
	"bytes"
	"errors"
	"testing"
)

func TestWellFormedAcceptsCompleteValuesOnly(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"positive fixint", []byte{0x05}, true},
		{"nil", []byte{0xc0}, true},
		{"fixstr", []byte{0xa2, 'h', 'i'}, true},
		{"fixmap of one", []byte{0x81, 0xa1, 'k', 0x01}, true},
		{"nested arrays", []byte{0x92, 0x91, 0x01, 0x90}, true},
		{"str8", []byte{0xd9, 0x01, 'x'}, true},
		{"fixext4", []byte{0xd6, 0xff, 1, 2, 3, 4}, true},
		{"ext8", []byte{0xc7, 0x02, 0x05, 1, 2}, true},
		{"float64", []byte{0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, true},
		{"empty input", nil, false},
		{"trailing byte", []byte{0x01, 0x02}, false},
		{"reserved 0xc1", []byte{0xc1}, false},
		{"truncated str", []byte{0xa3, 'a'}, false},
		{"truncated length", []byte{0xda, 0x00}, false},
		{"truncated float", []byte{0xcb, 0, 0}, false},
		{"map missing a value", []byte{0x81, 0x01}, false},
		{"map32 claiming 4G entries", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, false},
		{"array32 claiming 4G elements", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, false},
		{"bin32 claiming 4 GiB", []byte{0xc6, 0xff, 0xff, 0xff, 0xff}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := wellFormed(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("wellFormed(%x) = %v, want ok=%v", tc.in, err, tc.ok)
			}
		})
	}
}

func TestCanonicalizeSortsMapEntriesByEncodedKey(t *testing.T) {
	cases := []struct {
		name    string
		in, out []byte
	}{
		{"already sorted", []byte{0x82, 0x01, 0xc0, 0x02, 0xc0}, []byte{0x82, 0x01, 0xc0, 0x02, 0xc0}},
		{"two int keys", []byte{0x82, 0x02, 0xa1, 'b', 0x01, 0xa1, 'a'}, []byte{0x82, 0x01, 0xa1, 'a', 0x02, 0xa1, 'b'}},
		{"shorter string key first", []byte{0x82, 0xa2, 'a', 'a', 0x01, 0xa1, 'b', 0x02}, []byte{0x82, 0xa1, 'b', 0x02, 0xa2, 'a', 'a', 0x01}},
		{"map inside array inside map", []byte{0x82, 0x02, 0x91, 0x82, 0x09, 0xc3, 0x08, 0xc2, 0x01, 0xc0},
			[]byte{0x82, 0x01, 0xc0, 0x02, 0x91, 0x82, 0x08, 0xc2, 0x09, 0xc3}},
		{"scalars untouched", []byte{0x93, 0x03, 0x02, 0x01}, []byte{0x93, 0x03, 0x02, 0x01}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := canonicalize(tc.in)
			if err != nil || !bytes.Equal(got, tc.out) {
				t.Fatalf("canonicalize(%x) = %x, %v; want %x", tc.in, got, err, tc.out)
			}
		})
	}
	if _, err := canonicalize([]byte{0x81, 0x01}); !errors.Is(err, errMsgpackSyntax) {
		t.Fatalf("canonicalize of a broken map: %v, want a syntax error", err)
	}
}
