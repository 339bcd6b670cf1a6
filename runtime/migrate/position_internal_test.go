package migrate

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodePos: a stored position (any bytes another client wrote under
// the reserved key) never panics, and a decoded one encodes back the same.
func FuzzDecodePos(f *testing.F) {
	for _, s := range []string{`{"schema":"ab","decls":"cd","decl":"x","index":1,"cursor":"YWJj"}`, "", " ", `{"index":-1}`, `{"cursor":"!!"}`, `{"index":99999999999999999999}`, "0 YWJj", `{"cursor":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePos(b)
		if err != nil {
			return
		}
		p2, err := decodePos(encodePos(p))
		if err != nil || !bytes.Equal(p.Cursor, p2.Cursor) {
			t.Fatalf("%q: round trip gave %+v %v", b, p2, err)
		}
		p.Cursor, p2.Cursor = nil, nil
		if !reflect.DeepEqual(p, p2) {
			t.Fatalf("%q: round trip gave %+v %v", b, p2, err)
		}
	})
}

func TestPositionRoundTrip(t *testing.T) {
	for _, c := range []string{"", "abc", "a b\x00c"} {
		p := position{Schema: "s", Decls: "d", Decl: "n", Index: 7, Cursor: []byte(c)}
		got, err := decodePos(encodePos(p))
		if err != nil || got.Index != 7 || string(got.Cursor) != c || got.Decl != "n" || got.Schema != "s" {
			t.Fatalf("%q: %+v %v", c, got, err)
		}
	}
}

// TestPositionCheck: a saved position resumes only a run with its schema
// and declarations.
func TestPositionCheck(t *testing.T) {
	a := []Decl{{Name: "a", Pattern: "a/*"}, {Name: "b", Pattern: "b/*"}}
	saved := position{Schema: "s1", Decls: declsDigest(a), Decl: "b", Index: 1}
	for _, tc := range []struct {
		name   string
		p      position
		schema string
		decls  []Decl
		ok     bool
	}{
		{"same", saved, "s1", a, true},
		{"past the last", position{Schema: "s1", Decls: declsDigest(a), Index: 2}, "s1", a, true},
		{"other schema", saved, "s2", a, false},
		{"other patterns", saved, "s1", []Decl{{Name: "a", Pattern: "a/*"}, {Name: "b", Pattern: "c/*"}}, false},
		{"reordered", saved, "s1", []Decl{a[1], a[0]}, false},
		{"name at index differs", position{Schema: "s1", Decls: declsDigest(a), Decl: "a", Index: 1}, "s1", a, false},
		{"index out of range", position{Schema: "s1", Decls: declsDigest(a), Decl: "b", Index: 5}, "s1", a, false},
	} {
		err := tc.p.check("default", tc.schema, tc.decls)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrPositionMismatch) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
