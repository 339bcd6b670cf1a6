package server

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/ssgen/ssgen/server/engine"
)

// BenchmarkSetPersistence measures the engine's SET with the server's
// durable store behind it: no data dir, a data dir with unflagged keys
// (memory only), and flagged keys (one fsynced bbolt transaction each),
// sequential and from parallel callers (who queue on the engine lock, so
// the fsyncs do not overlap).
func BenchmarkSetPersistence(b *testing.B) {
	for _, bc := range []struct {
		name             string
		dataDir, persist bool
		parallel         bool
	}{
		{"memory", false, false, false},
		{"datadir-unflagged", true, false, false},
		{"datadir-persisted", true, true, false},
		{"datadir-persisted-parallel", true, true, true},
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
			if bc.parallel {
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						set(i)
						i++
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
