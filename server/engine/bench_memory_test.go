package engine_test

import (
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/ssgen/ssgen/server/engine"
)

// BenchmarkHeapMillionKeys is the heap a store of 1,000,000 keys with
// 100-byte values holds: live heap after a GC, with the keys stored,
// minus the same without. Run it with -benchtime=1x; every iteration
// builds the whole store again.
func BenchmarkHeapMillionKeys(b *testing.B) {
	const n, size = 1_000_000, 100
	value := make([]byte, size)
	key := make([]byte, 0, 16)
	var perKey, total float64
	for b.Loop() {
		before := liveHeap()
		e := engine.New(engine.Config{})
		for i := range n {
			key = fmt.Appendf(key[:0], "key/%07d", i)
			if err := e.Put(key, value, engine.PutOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		after := liveHeap()
		goruntime.KeepAlive(e)
		total = float64(after-before) / (1 << 20)
		perKey = float64(after-before) / n
	}
	b.ReportMetric(total, "MB-heap")
	b.ReportMetric(perKey, "B/key")
}

func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC() // the second collects what the first's finalizers freed
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}
