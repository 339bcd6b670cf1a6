package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// scanAll pages through SCAN pattern to the end and returns the keys
// listed and the requests it took.
func scanAll(tb testing.TB, e *Engine, pattern string) (listed, requests int) {
	tb.Helper()
	req := benchReq("SCAN", pattern)
	for {
		requests++
		res := e.Handle(req)
		v, err := resp3.ParseResponse(res.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 {
			tb.Fatalf("SCAN answered %.60q: %v", res.Payload, err)
		}
		listed += len(v.Elems[0].Elems)
		if len(v.Elems) == 1 {
			return listed, requests
		}
		req = benchReq("SCAN", pattern, string(v.Elems[1].Str))
	}
}

// keyedEngine is an engine holding n keys "key/%07d".
func keyedEngine(b *testing.B, n int) *Engine {
	e := benchEngine(b, Config{})
	for i := range n {
		e.Handle(benchReq("SET", fmt.Sprintf("key/%07d", i), "v"))
	}
	return e
}

// BenchmarkScanAll100k pages through every one of 100,000 keys; one
// iteration is the whole walk.
func BenchmarkScanAll100k(b *testing.B) {
	e := keyedEngine(b, 100_000)
	b.ReportAllocs()
	var requests int
	for b.Loop() {
		var n int
		if n, requests = scanAll(b, e, "*"); n != 100_000 {
			b.Fatalf("listed %d keys", n)
		}
	}
	b.ReportMetric(float64(requests), "requests/walk")
}

// BenchmarkScanNoMatch100k walks 100,000 keys none of which matches: the
// cost of examining keys, without listing them.
func BenchmarkScanNoMatch100k(b *testing.B) {
	e := keyedEngine(b, 100_000)
	b.ReportAllocs()
	var requests int
	for b.Loop() {
		var n int
		if n, requests = scanAll(b, e, "*/x*"); n != 0 {
			b.Fatalf("listed %d keys", n)
		}
	}
	b.ReportMetric(float64(requests), "requests/walk")
}

// BenchmarkScanAttack is issue #12's attack: one 1 MiB key of 'a' and the
// pattern '*' + 16,384 'a' + 'b'. One iteration is one SCAN request (the
// pattern is now refused before any key is examined).
func BenchmarkScanAttack(b *testing.B) {
	benchScanOneKey(b, "*"+strings.Repeat("a", 16384)+"b")
}

// BenchmarkScanAttackWithinLimit is the same attack with the longest
// pattern SCAN accepts: '*' + 1,022 'a' + 'b' (1 KiB).
func BenchmarkScanAttackWithinLimit(b *testing.B) {
	benchScanOneKey(b, "*"+strings.Repeat("a", 1022)+"b")
}

// BenchmarkScanStarsWithinLimit is '*a*a...*b' (1 KiB) on the 1 MiB key:
// many stars, each retried by a backtracking matcher.
func BenchmarkScanStarsWithinLimit(b *testing.B) {
	benchScanOneKey(b, strings.Repeat("*a", 511)+"*b")
}

func benchScanOneKey(b *testing.B, pattern string) {
	e := benchEngine(b, Config{})
	e.Handle(benchReq("SET", strings.Repeat("a", 1<<20), "v"))
	req := benchReq("SCAN", pattern)
	for b.Loop() {
		e.Handle(req)
	}
}

// BenchmarkScanPage is the cost of one full SCAN page (500 keys) from the
// middle of stores of 1,000, 100,000 and 1,000,000 keys: with the ordered
// index it is a seek plus the page, flat in the store's size.
func BenchmarkScanPage(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			e := keyedEngine(b, n)
			from := fmt.Sprintf("%x", fmt.Sprintf("key/%07d", n/2-scanPage))
			b.ReportAllocs()
			for b.Loop() {
				res := e.Handle(benchReq("SCAN", "*", from))
				if len(res.Payload) < scanPage*8 {
					b.Fatalf("short page %.60q", res.Payload)
				}
			}
		})
	}
}
