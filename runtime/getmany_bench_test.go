package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/cputime"
	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// BenchmarkGetMany1000 reads 1,000 keys of the embedded server in one
// GetMany, at several concurrency caps (32 is the default), next to the
// same 1,000 keys read with one Get after another, in the same run:
// compare each sub-benchmark's ms/op with its link's "sequential". On
// "loopback" the client talks to the server directly; on "link-500us" a
// proxy holds every chunk of bytes for 500 µs each way, as a network
// between an application and its broker would.
//
// Besides the wall-clock ms/op, each sub-benchmark reports cpu-ms/op: the
// CPU time (user + system) the whole process used per 1,000 keys, client
// and embedded server together. On a machine shared with other work the
// wall clock mostly measures the wait for a core; the CPU time does not,
// and it bounds what overlapping can win: 1,000 keys cannot take less
// wall time than cpu-ms/op divided by the cores available.
//
//	go test -run '^$' -bench GetMany1000 -count 3 ./runtime
func BenchmarkGetMany1000(b *testing.B) {
	const n = 1000
	srv := servertest.New(b)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "dev/%04d/config", i)
		if err := srv.Engine().Put(keys[i], []byte("a value of a typical size, some 40 bytes"), engine.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	dial := func(url string) *runtime.Client {
		cfg := testConfig(b, url)
		cfg.Logger = nil
		return dialConfig(b, cfg)
	}
	proxy := faultproxy.Start(b, srv.Addr())
	proxy.SetDelay(500 * time.Microsecond)
	ctx := context.Background()
	var cpu0 time.Duration
	perOp := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
		b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
	for _, link := range []struct {
		name string
		c    *runtime.Client
	}{{"loopback", dial(srv.URL())}, {"link-500us", dial("mqtt://" + proxy.Addr())}} {
		c := link.c
		b.Run(link.name+"/sequential", func(b *testing.B) {
			cpu0 = cputime.Process()
			for b.Loop() {
				for _, k := range keys {
					if _, _, err := c.Get(ctx, k); err != nil {
						b.Fatal(err)
					}
				}
			}
			perOp(b)
		})
		for _, conc := range []int{8, 32, 128} {
			b.Run(fmt.Sprintf("%s/getmany-%d", link.name, conc), func(b *testing.B) {
				cpu0 = cputime.Process()
				for b.Loop() {
					if _, err := c.GetMany(ctx, keys, runtime.GetManyOptions{Concurrency: conc}); err != nil {
						b.Fatal(err)
					}
				}
				perOp(b)
			})
		}
	}
}
