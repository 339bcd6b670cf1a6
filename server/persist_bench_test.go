package server

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/server/engine"
)

// BenchmarkSetPersistence measures the engine's SET (Handle, which
// returns once the change is durable) with the server's durable store
// behind it: no data dir, a data dir with unflagged keys (memory only),
// and flagged keys, from one caller (one transaction each) and from 64
// concurrent callers (whose writes share transactions: the group commit;
// writes/commit is how many). CPU time per operation is reported beside
// the wall time, which on a shared machine mostly measures the neighbours.
func BenchmarkSetPersistence(b *testing.B) {
	for _, bc := range []struct {
		name             string
		dataDir, persist bool
		parallel         int // callers per GOMAXPROCS, 0: one caller
	}{
		{"memory", false, false, 0},
		{"datadir-unflagged", true, false, 0},
		{"datadir-persisted", true, true, 0},
		{"memory-64-callers", false, false, 32},
		{"datadir-persisted-64-callers", true, true, 32},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := Options{Listen: "127.0.0.1:0", Logger: quietLog}
			if bc.dataDir {
				opts.DataDir = b.TempDir()
			}
			srv, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = srv.Close() })
			eng := srv.Engine()
			value := []byte("a value of some thirty-two bytes")
			set := func(i int) {
				key := []byte("bench/" + strconv.Itoa(i%1000))
				res := eng.Handle(engine.Request{Args: [][]byte{[]byte("SET"), key, value},
					HasTimestamp: true, Timestamp: "1:0:bench", Persist: bc.persist})
				if string(res.Payload) != "+OK\r\n" {
					panic(fmt.Sprintf("SET: %q", res.Payload))
				}
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			defer func() {
				b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
				if st := srv.Stats().Persist; st.Commits > 0 {
					b.ReportMetric(float64(st.Writes)/float64(st.Commits), "writes/commit")
				}
			}()
			if bc.parallel > 0 {
				b.SetParallelism(bc.parallel)
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						set(int(next.Add(1)))
					}
				})
				return
			}
			i := 0
			for b.Loop() {
				set(i)
				i++
			}
		})
	}
}
