package migrate_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server/servertest"
)

// getP99 runs GETs one after another on c until stop is closed and
// returns their p99.
func getP99(c *runtime.Client, stop <-chan struct{}, out chan<- time.Duration) {
	var lat []time.Duration
	for i := 0; ; i++ {
		select {
		case <-stop:
			slices.Sort(lat)
			if len(lat) == 0 {
				out <- 0
				return
			}
			out <- lat[len(lat)*99/100]
			return
		default:
		}
		t := time.Now()
		_, _, _ = c.Get(context.Background(), fmt.Appendf(nil, "item/%06d", i%1000))
		lat = append(lat, time.Since(t))
	}
}

// BenchmarkApply100k migrates 100,000 keys of the embedded server and
// reports keys/s and a concurrent reader's GET p99 against its p99 with
// no migration running (p99-ratio).
func BenchmarkApply100k(b *testing.B) {
	benchApply(b, 0) // 32 workers; 128 measured no faster on 2 cores
}

func benchApply(b *testing.B, workers int) {
	const n = 100000
	for range b.N {
		b.StopTimer()
		srv := servertest.New(b)
		c := dial(b, srv.URL())
		reader := dial(b, srv.URL())
		fill(b, c, n)
		stop, out := make(chan struct{}), make(chan time.Duration, 1)
		go getP99(reader, stop, out)
		time.Sleep(2 * time.Second) // a baseline sample, not synchronisation
		close(stop)
		base := <-out
		stop = make(chan struct{})
		go getP99(reader, stop, out)
		b.StartTimer()
		t := time.Now()
		res, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: io.Discard, Workers: workers})
		el := time.Since(t)
		b.StopTimer()
		close(stop)
		during := <-out
		if err != nil || res.Rewritten != n {
			b.Fatalf("Apply: %+v, %v", res, err)
		}
		b.ReportMetric(float64(n)/el.Seconds(), "keys/s")
		b.ReportMetric(float64(during)/float64(base), "p99-ratio")
		b.ReportMetric(float64(base.Microseconds()), "base-p99-µs")
		b.ReportMetric(float64(during.Microseconds()), "during-p99-µs")
	}
}
