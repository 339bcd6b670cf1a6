package engine

import "testing"

// BenchmarkExport100k takes a snapshot of 100,000 keys: the time requests
// wait for the engine's lock while an export copies the entries.
func BenchmarkExport100k(b *testing.B) {
	e := keyedEngine(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if s := e.Export(nil); len(s.Items) != 100_000 {
			b.Fatalf("%d items", len(s.Items))
		}
	}
}

// BenchmarkImport100k loads a snapshot of 100,000 keys into an empty
// engine: checks, clock and store, all under the lock but the item checks.
func BenchmarkImport100k(b *testing.B) {
	s := keyedEngine(b, 100_000).Export(nil)
	b.ReportAllocs()
	for b.Loop() {
		e := benchEngine(b, Config{})
		if _, err := e.Import(s, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanPage100k is one SCAN page of the same store, the baseline
// for Export: a request that walks 500 keys under the lock.
func BenchmarkScanPage100k(b *testing.B) {
	e := keyedEngine(b, 100_000)
	req := benchReq("SCAN", "*")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}
