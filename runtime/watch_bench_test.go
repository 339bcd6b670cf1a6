package runtime_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

// BenchmarkWatchNotify is the latency from the start of a SET by one
// client to the Watch event of another client's watcher (one watcher, one
// key): the server's notification path plus the runtime's dispatch. It
// reports the p50 and p99 of the rounds beside ns/op.
func BenchmarkWatchNotify(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			url := be.start(b).url
			setCfg, watchCfg := testConfig(b, url), testConfig(b, url)
			setCfg.Logger, watchCfg.Logger = nil, nil
			setter, watcher := dialConfig(b, setCfg), dialConfig(b, watchCfg)
			key := []byte("bench-watched")

			ctx, cancel := context.WithCancel(context.Background())
			events := make(chan runtime.Event, 16)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for ev, err := range watcher.Watch(ctx, key) {
					if err == nil && ev.Kind == runtime.EventSet {
						events <- ev
					}
				}
			}()
			b.Cleanup(func() { cancel(); <-done })

			// The registration is in place once a SET comes back as an event.
			warm := time.After(10 * time.Second)
			for ready := false; !ready; {
				if _, err := setter.Set(ctx, key, []byte("warm"), runtime.SetOptions{}); err != nil {
					b.Fatal(err)
				}
				select {
				case <-events:
					ready = true
				case <-time.After(20 * time.Millisecond):
				case <-warm:
					b.Fatal("the watch never saw a SET")
				}
			}
			for len(events) > 0 {
				<-events
			}

			value := make([]byte, 0, 32)
			var lat []time.Duration
			lost := time.NewTimer(time.Hour)
			lost.Stop()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				value = strconv.AppendInt(value[:0], int64(i), 10)
				start := time.Now()
				if _, err := setter.Set(ctx, key, value, runtime.SetOptions{}); err != nil {
					b.Fatal(err)
				}
				lost.Reset(10 * time.Second)
			wait:
				for {
					select {
					case ev := <-events:
						if string(ev.Value) == string(value) {
							break wait
						}
					case <-lost.C:
						b.Fatalf("no notification of SET %d", i)
					}
				}
				lost.Stop()
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			if n := len(lat); n > 0 {
				b.ReportMetric(float64(lat[(n*50+99)/100-1].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[(n*99+99)/100-1].Microseconds()), "p99-µs")
			}
		})
	}
}
