package persist

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkPersistFileWatch measures what the checks of the data file
// (watch.go) add to each commit: the check before it and the one
// after it, on a real data file, with nothing written in between.
func BenchmarkPersistFileWatch(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	w := s.watch
	var txid uint64
	_ = s.db.View(func(tx *bolt.Tx) error {
		txid = uint64(tx.ID())
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		if err := w.before(); err != nil {
			b.Fatal(err)
		}
		if err := w.after(txid, true); err != nil {
			b.Fatal(err)
		}
	}
}
