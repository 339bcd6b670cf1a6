package e2e_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// BenchmarkListThermostats100k lists 100,000 thermostats (one key each)
// from the embedded server through the generated lister, next to
// ListKeys over the same glob: the difference is the template match, the
// typed parse (pattern included) and the de-duplication.
func BenchmarkListThermostats100k(b *testing.B) {
	const n = 100_000
	srv := servertest.New(b)
	for i := range n {
		if err := srv.Engine().Put(fmt.Appendf(nil, "thermostats/t%06d/reading", i), []byte("21.5"), engine.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	store := e2e.New(c)
	b.Run("ListThermostats", func(b *testing.B) {
		for b.Loop() {
			count := 0
			for _, err := range store.ListThermostats(runtime.ListOptions{}).All(ctx) {
				if err != nil {
					b.Fatal(err)
				}
				count++
			}
			if count != n {
				b.Fatalf("listed %d, want %d", count, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/listing")
	})
	b.Run("ListKeys", func(b *testing.B) {
		for b.Loop() {
			count := 0
			for _, err := range c.ListKeys("thermostats/*/*", runtime.ListOptions{}).All(ctx) {
				if err != nil {
					b.Fatal(err)
				}
				count++
			}
			if count != n {
				b.Fatalf("listed %d, want %d", count, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/listing")
	})
}
