package schema

import (
	"fmt"
	"strings"
	"testing"
)

// largeSchema is a schema of n parameterised keys (n a multiple of 20):
// half top-level, half in groups of ten, and one role that reads every
// group and top-level key and writes every other key, each named on its
// own.
// Its checks compare every key with every other and every grant with
// every key unless they are indexed.
func largeSchema(n int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\npackage: large\ntypes:\n  Mode:\n    enum: [heat, cool, \"off\"]\nkeys:\n")
	var reads, writes []string
	for i := range n / 2 {
		fmt.Fprintf(&b, "  Top%d: {path: \"top/k%d/{id}\", params: {id: string}, type: float64}\n", i, i)
		reads = append(reads, fmt.Sprintf("Top%d", i))
		if i%2 == 0 {
			writes = append(writes, fmt.Sprintf("Top%d", i))
		}
	}
	b.WriteString("groups:\n")
	for g := range n / 20 {
		fmt.Fprintf(&b, "  Site%d:\n    path: \"sites/{site}/g%d\"\n    params: {site: string}\n    keys:\n", g, g)
		for k := range 10 {
			fmt.Fprintf(&b, "      K%d: {path: \"k%d/{n}/{mode}\", params: {n: int, mode: Mode}, type: string}\n", k, k)
			if k%2 == 0 {
				writes = append(writes, fmt.Sprintf("Site%d.K%d", g, k))
			}
		}
		reads = append(reads, fmt.Sprintf("Site%d", g))
	}
	fmt.Fprintf(&b, "roles:\n  app:\n    client_ids: [app]\n    read: [%s]\n    write: [%s]\n", strings.Join(reads, ", "), strings.Join(writes, ", "))
	return []byte(b.String())
}

func BenchmarkLoadLargeSchema(b *testing.B) {
	for _, n := range []int{1000, 3000, 10000} {
		src := largeSchema(n)
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Load("large.yaml", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLargeSchemaChecksDoAboutLinearWork loads schemas of 1,000 and
// 10,000 keys and counts the work of the checks that compare declarations
// with each other: comparing every pair would be 100 times more for ten
// times the keys (and was: 3,000 keys took 16 s).
func TestLargeSchemaChecksDoAboutLinearWork(t *testing.T) {
	steps := map[int]int{}
	for _, n := range []int{1000, 10000} {
		l := &loader{file: "large.yaml", s: &Schema{Filename: "large.yaml"}}
		l.load(largeSchema(n))
		if len(l.errs) > 0 {
			t.Fatalf("%d keys: %v", n, l.errs[0])
		}
		steps[n] = l.steps
		t.Logf("%d keys: %d steps", n, l.steps)
		if per := l.steps / n; per > 30 {
			t.Errorf("%d keys: %d steps, %d per key", n, l.steps, per)
		}
	}
	if steps[10000] > 15*steps[1000] {
		t.Errorf("ten times the keys took %d times the steps (%d, then %d)", steps[10000]/max(steps[1000], 1), steps[1000], steps[10000])
	}
}
