package persist_test

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/internal/cputime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// benchStoreKeys is how many keys the start-up benchmarks store:
// SSGEN_BENCH_KEYS, or 100,000 (the 1,000,000-key figure in the docs was
// taken with SSGEN_BENCH_KEYS=1000000).
func benchStoreKeys(b *testing.B) int {
	n := 100_000
	if s := os.Getenv("SSGEN_BENCH_KEYS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("SSGEN_BENCH_KEYS=%q", s)
		}
		n = v
	}
	return n
}

// writeBenchStore writes n kept keys with 100-byte values into dir's data
// file in a few large transactions, through the same record encoding a
// server uses (going through the engine would cost one fsync per key).
func writeBenchStore(b *testing.B, dir string, n int) {
	b.Helper()
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, server.StoreFile), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	version := hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "bench"}
	const perTx = 100_000
	for start := 0; start < n; start += perTx {
		err := db.Update(func(tx *bolt.Tx) error {
			keys := tx.Bucket(persist.BucketKeys)
			for i := start; i < min(start+perTx, n); i++ {
				r := engine.Record{Key: fmt.Sprintf("bench/%08d", i), Value: value, Version: version}
				v, err := persist.EncodeRecord(r)
				if err != nil {
					return err
				}
				if err := keys.Put([]byte(r.Key), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStartup measures New (open, check and load the data file into
// the engine) plus Close on a store of benchStoreKeys kept keys. Besides
// wall and CPU time it reports the heap: heap-MB is what the loaded store
// keeps (live heap after a collection, minus the heap before New), peak-
// heap-MB the most heap objects seen during New (sampled every 5 ms, at
// the test binary's GOGC).
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	n := benchStoreKeys(b)
	writeBenchStore(b, dir, n)
	if fi, err := os.Stat(filepath.Join(dir, server.StoreFile)); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	}
	// CPU time as well as wall time: on a shared machine the wall time
	// of a start mostly measures the neighbours.
	var cpu time.Duration
	var live, peak uint64
	for b.Loop() {
		base := liveHeap()
		stop := samplePeakHeap()
		cpu0 := cputime.Process()
		srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
		cpu += cputime.Process() - cpu0
		peak = max(peak, stop()-base)
		if err != nil {
			b.Fatal(err)
		}
		if got := srv.Engine().Len(); got != n {
			b.Fatalf("%d keys loaded, want %d", got, n)
		}
		live = max(live, liveHeap()-base)
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(live)/1e6, "heap-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// samplePeakHeap samples the bytes of heap objects every 5 ms until the
// function it returns is called, which returns the largest sample.
func samplePeakHeap() func() uint64 {
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-done:
				result <- top
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

// BenchmarkBoltCheck measures bbolt's own consistency check (Tx.Check) on
// the same store, the cost a check at every start would add. (The server
// does not run it; check.go says why.)
func BenchmarkBoltCheck(b *testing.B) {
	dir := b.TempDir()
	writeBenchStore(b, dir, benchStoreKeys(b))
	db, err := bolt.Open(filepath.Join(dir, server.StoreFile), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		err := db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRecord is the encoding of one kept SET's record, the
// part of the write path the record checksum adds to.
func BenchmarkEncodeRecord(b *testing.B) {
	r := engine.Record{Key: "bench/00000042", Value: make([]byte, 100),
		Version: hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "bench"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := persist.EncodeRecord(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartupWithLog is BenchmarkStartup after a crash that left a
// full write-ahead log (checkpointBytes of groups of 25 overwritten keys,
// none checkpointed): the start replays it into the data file first.
func BenchmarkStartupWithLog(b *testing.B) {
	src := b.TempDir()
	n := benchStoreKeys(b)
	writeBenchStore(b, src, n)
	image := b.TempDir()
	persist.CrashWithFullLog(b, src, image, n)
	dir := b.TempDir()
	var cpu time.Duration
	var live, peak uint64
	for b.Loop() {
		b.StopTimer()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
		persist.CopyDir(b, image, dir)
		base := liveHeap()
		b.StartTimer()
		stop := samplePeakHeap()
		cpu0 := cputime.Process()
		srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quietLog})
		cpu += cputime.Process() - cpu0
		peak = max(peak, stop()-base)
		if err != nil {
			b.Fatal(err)
		}
		if got := srv.Engine().Len(); got != n {
			b.Fatalf("%d keys loaded, want %d", got, n)
		}
		live = max(live, liveHeap()-base)
		b.StopTimer()
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(live)/1e6, "heap-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
