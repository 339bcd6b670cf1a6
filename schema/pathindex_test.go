package schema

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// randomPaths builds n paths of one to four segments from a small
// alphabet, so that they often meet: literals (one with a glob
// character, integers with and without a canonical form, enum values),
// string parameters with and without a pattern, integers of two sizes and
// two enums.
func randomPaths(seed uint64, n int) []Path {
	r := rand.New(rand.NewPCG(seed, 1))
	enum := func(name string, vals ...string) *Type {
		td := &TypeDef{Name: name, Kind: KindEnum}
		for _, v := range vals {
			td.Values = append(td.Values, &EnumValue{Value: v})
		}
		return &Type{Kind: KindEnum, Def: td}
	}
	mode, digit := enum("Mode", "heat", "cool"), enum("Digit", "1", "a")
	params := []*Param{
		{Name: "s", Type: &Type{Kind: KindString}},
		{Name: "p", Type: &Type{Kind: KindString}, Pattern: "[a-z]+", Regexp: regexp.MustCompile(`^(?:[a-z]+)$`)},
		{Name: "i", Type: &Type{Kind: KindInt}},
		{Name: "u", Type: &Type{Kind: KindUint8}},
		{Name: "m", Type: mode},
		{Name: "d", Type: digit},
	}
	lits := []string{"a", "b", "heat", "1", "-1", "07", "300", "a*"}
	out := make([]Path, n)
	for i := range out {
		segs := make([]Segment, 1+r.IntN(4))
		for j := range segs {
			if r.IntN(2) == 0 {
				segs[j] = Segment{Param: params[r.IntN(len(params))]}
			} else {
				segs[j] = Segment{Literal: lits[r.IntN(len(lits))]}
			}
		}
		out[i] = Path{Segments: segs}
	}
	return out
}

// checkIndexAgrees compares the index's answers with the pairwise checks
// they replace, for every path of ps.
func checkIndexAgrees(t *testing.T, ps []Path) {
	t.Helper()
	idx := newPathIndex()
	for i, p := range ps {
		idx.add(i, p)
	}
	for _, p := range ps {
		var overlap, reach []int
		glob, exact := p.Glob()
		for j, q := range ps {
			if pathsOverlap(p, q) {
				overlap = append(overlap, j)
			}
			if globReaches(glob, exact, q) {
				reach = append(reach, j)
			}
		}
		if got := idx.overlapping(p); !slices.Equal(got, overlap) {
			t.Fatalf("overlapping(%s) = %v, pairwise %v (paths %v)", p, got, overlap, ps)
		}
		got := idx.reachedBy(p)
		var confirmed []int
		for _, j := range got {
			if globReaches(glob, exact, ps[j]) {
				confirmed = append(confirmed, j)
			}
		}
		if !slices.Equal(confirmed, reach) {
			t.Fatalf("reachedBy(%s) = %v, pairwise %v (paths %v)", p, got, reach, ps)
		}
		if !strings.Contains(glob, "?") && !slices.Equal(got, reach) {
			t.Fatalf("reachedBy(%s) = %v is not exact: pairwise %v", p, got, reach)
		}
	}
}

func TestPathIndexAgreesWithThePairwiseChecks(t *testing.T) {
	for seed := range uint64(100) {
		checkIndexAgrees(t, randomPaths(seed, 40))
	}
}

func FuzzPathIndexAgreesWithThePairwiseChecks(f *testing.F) {
	for _, seed := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(seed, uint8(30))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		checkIndexAgrees(t, randomPaths(seed, int(n%64)))
	})
}

func TestPathSetReachedByIsGlobReachesOfEachPath(t *testing.T) {
	for seed := range uint64(50) {
		ps := randomPaths(seed, 40)
		set := NewPathSet(ps)
		for _, p := range ps {
			var want []int
			for j, q := range ps {
				if p.GlobReaches(q) {
					want = append(want, j)
				}
			}
			if got := set.ReachedBy(p); !slices.Equal(got, want) {
				t.Fatalf("ReachedBy(%s) = %v, want %v", p, got, want)
			}
		}
	}
}
