package schema

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/glob"
)

// pathsOf loads a schema of one top-level key per path and returns their
// full paths, in order.
func pathsOf(t *testing.T, types string, keys ...string) []Path {
	t.Helper()
	src := "version: 1\npackage: p\n" + types + "keys:\n"
	for i, k := range keys {
		src += "  K" + string(rune('A'+i)) + ": " + k + "\n"
	}
	s, err := Load("x.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	var out []Path
	for _, k := range s.Keys {
		out = append(out, k.FullPath())
	}
	return out
}

func TestGlobOfAPath(t *testing.T) {
	for _, tc := range []struct {
		key   string
		glob  string
		exact bool
	}{
		{`{path: a/b, type: int}`, "a/b", true},
		{`{path: "a*/b?", type: int}`, "a*/b?", true},
		{`{path: "t/{id}/set", params: {id: string}, type: int}`, "t/*/set", false},
		{`{path: "t*/{id}/[x]\\", params: {id: int}, type: int}`, "t?/*/?x]?", false},
	} {
		p := pathsOf(t, "", tc.key)[0]
		if g, exact := p.Glob(); g != tc.glob || exact != tc.exact {
			t.Errorf("%s: Glob() = %q, %v; want %q, %v", tc.key, g, exact, tc.glob, tc.exact)
		}
	}
}

// mkPath builds a path from its template: {s} is a string parameter, {n}
// an int, {m} an enum of heat and cool.
func mkPath(tmpl string) Path {
	mode := &TypeDef{Name: "Mode", Kind: KindEnum, Values: []*EnumValue{{Value: "heat"}, {Value: "cool"}}}
	var p Path
	for _, seg := range strings.Split(tmpl, "/") {
		switch seg {
		case "{s}":
			p.Segments = append(p.Segments, Segment{Param: &Param{Name: "s", Type: &Type{Kind: KindString}}})
		case "{n}":
			p.Segments = append(p.Segments, Segment{Param: &Param{Name: "n", Type: &Type{Kind: KindInt}}})
		case "{m}":
			p.Segments = append(p.Segments, Segment{Param: &Param{Name: "m", Type: &Type{Kind: KindEnum, Def: mode}}})
		default:
			p.Segments = append(p.Segments, Segment{Literal: seg})
		}
	}
	return p
}

func TestGlobReachesAnotherPath(t *testing.T) {
	for _, tc := range []struct {
		from, to  string
		wantReach bool
		witness   string // a key of to that the glob of from matches, when wantReach
	}{
		{"t/{s}/b", "t/{s}/u/{n}/b", true, "t/1/u/2/b"},
		{"t/{s}/b", "t/{s}/c", false, ""},
		{"t/7", "t/{n}", true, "t/7"},
		{"t/dry", "t/{m}", false, ""},
		{"t/cool", "t/{m}", true, "t/cool"},
		{"t/x", "t/{n}", false, ""},
		{"t/-1", "t/{n}", true, "t/-1"},
		{"a/{s}", "a/b/c", true, "a/b/c"},
		{"a*/{s}", "ab/c", true, "ab/c"},
		{"a*/{s}", "abc/c", false, ""},
		{"{m}/{s}", "heat/x", true, "heat/x"},
		{"{m}/x", "{m}/y", false, ""},
		{"x/{s}", "x", false, ""},
	} {
		t.Run(tc.from+" "+tc.to, func(t *testing.T) {
			from, to := mkPath(tc.from), mkPath(tc.to)
			g, exact := from.Glob()
			if got := globReaches(g, exact, to); got != tc.wantReach {
				t.Fatalf("globReaches(%q, %v, %s) = %v, want %v", g, exact, to, got, tc.wantReach)
			}
			// The state store's own matcher agrees on the witness.
			if tc.wantReach && !exact && !glob.Compile(g).Match(tc.witness) {
				t.Fatalf("the store's glob %q does not match %q", g, tc.witness)
			}
		})
	}
}
