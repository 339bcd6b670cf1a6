package main

import (
	"testing"
)

func TestResumeIndex(t *testing.T) {
	page := [][]byte{[]byte("a"), []byte("c"), []byte("e")}
	tests := []struct {
		name  string
		keys  [][]byte
		after string
		want  int
	}{
		{"no key printed yet", page, "", 0},
		{"after a key of the page", page, "c", 2},
		{"after the page's last key", page, "e", 3},
		{"the key was deleted: the next above it", page, "b", 1},
		{"the key was deleted, all above it", page, "0", 0},
		{"the key was deleted, none above it", page, "f", 3},
		{"a page out of order is listed again whole", [][]byte{[]byte("c"), []byte("a")}, "b", 0},
		{"a page out of order, the key found", [][]byte{[]byte("c"), []byte("a")}, "c", 1},
	}
	for _, tt := range tests {
		var after []byte
		if tt.after != "" {
			after = []byte(tt.after)
		}
		if got := resumeIndex(tt.keys, after); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// FuzzKeysCursor: any --cursor text is refused or read, never a panic,
// and a printed cursor reads back as it was.
func FuzzKeysCursor(f *testing.F) {
	for _, c := range []keysCursor{{}, {token: "746f6b"}, {token: "t", after: []byte("dev/0003")}, {after: []byte{0, 0xff}}} {
		f.Add(c.String("dev/*"), "dev/*")
	}
	f.Add("k1.", "*")
	f.Add("k1.AAAAAP8", "*")
	f.Add("garbage", "*")
	f.Fuzz(func(t *testing.T, s, pattern string) {
		c, err := parseKeysCursor(s, pattern)
		if err != nil {
			return
		}
		back, err := parseKeysCursor(c.String(pattern), pattern)
		if err != nil || back.token != c.token || string(back.after) != string(c.after) {
			t.Fatalf("%q: read %+v, printed and read again %+v (%v)", s, c, back, err)
		}
	})
}
