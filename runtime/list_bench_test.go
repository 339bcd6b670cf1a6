package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// BenchmarkListKeys100k lists 100,000 keys through the runtime from the
// embedded server, end to end (every page a SCAN round trip). Its
// sub-benchmark "get-during" reports another client's GET latency
// percentiles while full listings run back to back, next to "get-alone",
// the same GETs with nothing else running, so the two compare in one run.
func BenchmarkListKeys100k(b *testing.B) {
	const n = 100_000
	srv := servertest.New(b)
	for i := range n {
		if err := srv.Engine().Put(fmt.Appendf(nil, "dev/%06d/config", i), []byte("0123456789"), engine.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	quiet := func() *runtime.Client {
		cfg := testConfig(b, srv.URL())
		cfg.Logger = nil
		return dialConfig(b, cfg)
	}
	lister, getter := quiet(), quiet()
	ctx := context.Background()
	list := func() {
		count := 0
		for _, err := range lister.ListKeys("dev/*", runtime.ListOptions{}).All(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		if count != n {
			b.Fatalf("listed %d keys, want %d", count, n)
		}
	}
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			list()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/listing")
	})
	// GET latency with the listing loop running in the background (or
	// not): percentiles over every GET of the run.
	gets := func(b *testing.B, listing bool) {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		listings := 0
		if listing {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					list()
					listings++
				}
			}()
		}
		var lat []time.Duration
		key := []byte("dev/000042/config")
		for b.Loop() {
			t0 := time.Now()
			if _, _, err := getter.Get(ctx, key); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		close(stop)
		wg.Wait()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		if listing {
			b.ReportMetric(float64(listings), "listings")
		}
	}
	b.Run("get-alone", func(b *testing.B) { gets(b, false) })
	b.Run("get-during", func(b *testing.B) { gets(b, true) })
}
