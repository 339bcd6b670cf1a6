package server_test

import (
	"testing"

	"github.com/ssgen/ssgen/server"
)

// BenchmarkGetRoundTrip measures one client's sequential GET requests
// (publish, wait for the response) against each transport, for comparison
// with the raw-MQTT baseline of ssgen bench --baseline (docs/performance.md).
func BenchmarkGetRoundTrip(b *testing.B) {
	for _, mode := range []string{"embedded", "mosquitto"} {
		b.Run(mode, func(b *testing.B) {
			broker := ""
			if mode == "mosquitto" {
				broker = mosquittoURL(b)
			}
			e := newEnv(b, broker, []func(*server.Options){func(o *server.Options) { o.Logger = quiet }})
			c := e.connect("bench")
			checkResponse(b, c.do("SET", "k", "value"), "+OK\r\n", true)
			req := request{payload: cmd("GET", "k"), corr: []byte("0123456789abcdef")}
			b.ResetTimer()
			for b.Loop() {
				c.send(req)
				c.await()
			}
		})
	}
}
