package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// flip rewrites "vA:x" to "vB:x": alternating flip{"v1:","v2:"} and
// flip{"v2:","v1:"} migrates the same 100,000 keys again without filling
// the store again.
type flip struct{ from, to string }

func (f flip) Current(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, []byte(f.to)):
		return b, nil
	case bytes.HasPrefix(b, []byte(f.from)):
		return append([]byte(f.to), b[len(f.from):]...), nil
	}
	return nil, errors.New("not a value")
}

// ceiling is the requests/s the server answers to one client keeping
// inflight GETs in flight (n GETs in all).
func ceiling(c *runtime.Client, inflight, n int) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	t := time.Now()
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				_, _, _ = c.Get(context.Background(), fmt.Appendf(nil, "item/%06d", i%100000))
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(t).Seconds()
}

type round struct {
	workers                 int
	keysPerSec, ceil, ceilW float64
	base, during            time.Duration
}

// applyRound measures one migration of every key: the server's ceiling
// (32 and workers GETs in flight), a reader's GET p99 alone, then Apply
// with the reader running.
func applyRound(tb testing.TB, c, reader *runtime.Client, n, workers int, d migrate.Decl) round {
	r := round{workers: max(workers, 0)}
	if r.workers == 0 {
		r.workers = migrate.DefaultWorkers
	}
	r.ceil = ceiling(c, 32, 30000)
	r.ceilW = ceiling(c, r.workers, 30000)
	stop, out := make(chan struct{}), make(chan time.Duration, 1)
	go getP99(reader, stop, out)
	time.Sleep(2 * time.Second) // a baseline sample, not synchronisation
	close(stop)
	r.base = <-out
	stop = make(chan struct{})
	go getP99(reader, stop, out)
	t := time.Now()
	res, err := migrate.Apply(context.Background(), c, []migrate.Decl{d}, migrate.Options{Backup: io.Discard, Workers: workers})
	el := time.Since(t)
	close(stop)
	r.during = <-out
	if err != nil || res.Rewritten != int64(n) {
		tb.Fatalf("Apply: %+v, %v", res, err)
	}
	r.keysPerSec = float64(n) / el.Seconds()
	return r
}

func (r round) String() string {
	return fmt.Sprintf("workers %2d: %6.0f keys/s; ceiling %6.0f req/s at 32 in flight (%.2f of ceiling/3), %6.0f at %d in flight (%.2f); GET p99 %5.0f µs alone, %6.0f µs during (%.2f×)",
		r.workers, r.keysPerSec, r.ceil, r.keysPerSec/(r.ceil/3), r.ceilW, r.workers, r.keysPerSec/(r.ceilW/3),
		float64(r.base.Microseconds()), float64(r.during.Microseconds()), float64(r.during)/float64(r.base))
}

// benchKeys is 100,000 unless MIGRATE_KEYS says otherwise (for profiling).
var benchKeys = func() int {
	if n, err := strconv.Atoi(os.Getenv("MIGRATE_KEYS")); err == nil && n > 0 {
		return n
	}
	return 100000
}()

// BenchmarkApply100k migrates 100,000 keys of the embedded server with the
// default Workers and reports keys/s, the server's ceiling measured in the
// same run (requests/s one client gets with 32 GETs in flight) and keys/s
// as a fraction of ceiling/3 (each key costs three requests), and a
// concurrent reader's GET p99 against its p99 with no migration running
// (p99-ratio).
func BenchmarkApply100k(b *testing.B) {
	srv := servertest.New(b)
	c := dial(b, srv.URL())
	reader := dial(b, srv.URL())
	fill(b, c, benchKeys)
	b.ResetTimer()
	for i := range b.N {
		d := migrate.Decl{Name: "item", Pattern: "item/*", Codec: flip{"v1:", "v2:"}}
		if i%2 == 1 {
			d.Codec = flip{"v2:", "v1:"}
		}
		r := applyRound(b, c, reader, benchKeys, 0, d)
		fmt.Fprintln(os.Stderr, "apply:", r)
		b.ReportMetric(r.keysPerSec, "keys/s")
		b.ReportMetric(r.ceil, "ceiling-req/s")
		b.ReportMetric(r.keysPerSec/(r.ceil/3), "of-ceiling/3")
		b.ReportMetric(float64(r.during)/float64(r.base), "p99-ratio")
	}
}

// BenchmarkApply100kSweep measures the trade-off of Workers: rounds of
// each setting interleaved (MIGRATE_SWEEP="1,2,4,8,32" by default), each
// logged with its own ceiling and baseline p99.
func BenchmarkApply100kSweep(b *testing.B) {
	ws := []int{1, 2, 4, 8, 32}
	if s := os.Getenv("MIGRATE_SWEEP"); s != "" {
		ws = ws[:0]
		for f := range strings.SplitSeq(s, ",") {
			w, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			ws = append(ws, w)
		}
	}
	srv := servertest.New(b)
	c := dial(b, srv.URL())
	reader := dial(b, srv.URL())
	fill(b, c, benchKeys)
	flips := []flip{{"v1:", "v2:"}, {"v2:", "v1:"}}
	k := 0
	for range b.N {
		for _, w := range ws {
			r := applyRound(b, c, reader, benchKeys, w, migrate.Decl{Name: "item", Pattern: "item/*", Codec: flips[k%2]})
			k++
			fmt.Fprintln(os.Stderr, "sweep:", r)
		}
	}
}

// BenchmarkValidate100k counts 100,000 keys of the embedded server with
// Validate (what ssgen migrate apply adds after a resumed run) and
// reports keys/s, next to Apply's keys/s over the same keys.
func BenchmarkValidate100k(b *testing.B) {
	srv := servertest.New(b)
	c := dial(b, srv.URL())
	fill(b, c, benchKeys)
	d := migrate.Decl{Name: "item", Pattern: "item/*", Codec: flip{"v1:", "v2:"}}
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		counts, err := migrate.Validate(context.Background(), c, []migrate.Decl{d})
		el := time.Since(t)
		if err != nil || counts[0].Current+counts[0].Outdated != int64(benchKeys) {
			b.Fatalf("Validate: %+v, %v", counts, err)
		}
		t = time.Now()
		res, err := migrate.Apply(context.Background(), c, []migrate.Decl{d}, migrate.Options{Backup: io.Discard})
		ael := time.Since(t)
		if err != nil {
			b.Fatal(err)
		}
		f := d.Codec.(flip)
		d.Codec = flip{f.to, f.from}
		b.ReportMetric(float64(benchKeys)/el.Seconds(), "validate-keys/s")
		b.ReportMetric(float64(res.Seen)/ael.Seconds(), "apply-keys/s")
	}
}
