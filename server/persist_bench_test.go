package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/cputime"
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
			cpu0 := cputime.Process()
			defer func() {
				b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
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

// BenchmarkFileSizeUnderChurn overwrites 10,000 kept keys of 100 bytes
// SSGEN_CHURN_WRITES times in all (default 200,000; the figure in
// docs/reliability.md was taken with 10,000,000), from 64 concurrent
// callers through the group commit, and reports the data file's size
// after the first write of every key (first-MiB), at the end (file-MiB)
// and at its largest, read after every tenth of the writes (max-MiB), and
// the part of it the last transaction uses (used-MiB: bbolt's high-water
// page; the rest is room bbolt has allocated ahead). bbolt never shrinks
// a file; what matters is that it stops growing.
func BenchmarkFileSizeUnderChurn(b *testing.B) {
	const keys, callers = 10_000, 64
	writes := 200_000
	if s := os.Getenv("SSGEN_CHURN_WRITES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < keys {
			b.Fatalf("SSGEN_CHURN_WRITES=%q: want a number of at least %d", s, keys)
		}
		writes = v
	}
	value := make([]byte, 100)
	for b.Loop() {
		dir := b.TempDir()
		srv, err := New(Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
		if err != nil {
			b.Fatal(err)
		}
		eng := srv.Engine()
		size := func() float64 {
			fi, err := os.Stat(filepath.Join(dir, StoreFile))
			if err != nil {
				b.Fatal(err)
			}
			return float64(fi.Size()) / (1 << 20)
		}
		var next atomic.Int64
		run := func(upTo int64) {
			var wg sync.WaitGroup
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := next.Add(1) - 1; i < upTo; i = next.Add(1) - 1 {
						key := fmt.Appendf(nil, "churn/%05d", i%keys)
						res := eng.Handle(engine.Request{Args: [][]byte{[]byte("SET"), key, value},
							HasTimestamp: true, Timestamp: "1:0:bench", Persist: true})
						if string(res.Payload) != "+OK\r\n" {
							panic(fmt.Sprintf("SET: %q", res.Payload))
						}
					}
				}()
			}
			wg.Wait()
			next.Store(upTo)
		}
		run(keys)
		first, top := size(), 0.0
		for tenth := int64(1); tenth <= 10; tenth++ {
			run(keys + (int64(writes)-keys)*tenth/10)
			top = max(top, size())
			b.Logf("%d writes: file %.1f MiB, used %.2f MiB", next.Load(), size(), float64(srv.disk.Used())/(1<<20))
		}
		b.ReportMetric(first, "first-MiB")
		b.ReportMetric(size(), "file-MiB")
		b.ReportMetric(top, "max-MiB")
		b.ReportMetric(float64(srv.disk.Used())/(1<<20), "used-MiB")
		if st := srv.Stats().Persist; st.Commits > 0 {
			b.ReportMetric(float64(st.Writes)/float64(st.Commits), "writes/commit")
		}
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
