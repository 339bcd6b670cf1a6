package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

// benchClientWithKey dials a quiet client to be's state store and stores
// the key its GETs read.
func benchClientWithKey(b *testing.B, be backend) (*runtime.Client, []byte) {
	url := be.start(b).url
	cfg := testConfig(b, url)
	cfg.Logger = nil
	c := dialConfig(b, cfg)
	key := []byte("bench-key")
	if _, err := c.Set(context.Background(), key, []byte("a value of a typical size, some 40 bytes"), runtime.SetOptions{}); err != nil {
		b.Fatal(err)
	}
	return c, key
}

// Client-side cost and latency of one GET round trip: request encoding,
// envelope, publish, response routing and decoding, against a state store
// on loopback.
func BenchmarkGetRoundTrip(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			c, key := benchClientWithKey(b, be)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := c.Get(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Throughput of one client with many requests in flight.
func BenchmarkGetParallel(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			c, key := benchClientWithKey(b, be)
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(16) // 16 × GOMAXPROCS requests in flight
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := c.Get(ctx, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// Throughput of four clients sharing the load, the way several
// processes use one state store (the service handles each client's
// requests in order, so one client alone cannot use more than one of its
// cores).
func BenchmarkGetParallel4Clients(b *testing.B) {
	url := backends[0].start(b).url
	var clients []*runtime.Client
	for range 4 {
		cfg := testConfig(b, url)
		cfg.Logger = nil
		clients = append(clients, dialConfig(b, cfg))
	}
	ctx := context.Background()
	key := []byte("bench-key")
	if _, err := clients[0].Set(ctx, key, []byte("a value of a typical size, some 40 bytes"), runtime.SetOptions{}); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int32
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := clients[int(next.Add(1))%len(clients)]
		for pb.Next() {
			if _, _, err := c.Get(ctx, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
