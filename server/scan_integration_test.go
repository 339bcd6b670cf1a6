package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// scanWalk pages through SCAN pattern over MQTT and returns the keys
// listed.
func scanWalk(t testing.TB, c *client, pattern string) []string {
	t.Helper()
	var listed []string
	a := []string{"SCAN", pattern}
	for range 10_000 {
		p := c.do(a...)
		v, err := resp3.ParseResponse(p.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 || len(v.Elems) > 2 {
			t.Fatalf("SCAN answered %.80q: %v", p.Payload, err)
		}
		for _, k := range v.Elems[0].Elems {
			listed = append(listed, string(k.Str))
		}
		if len(v.Elems) == 1 {
			return listed
		}
		a = []string{"SCAN", pattern, string(v.Elems[1].Str)}
	}
	t.Fatal("SCAN does not end")
	return nil
}

// TestScanAttackIsRefusedAndOthersAreServed is issue #12's attack: a 1 MiB
// key and the pattern '*' + 16,384 'a' + 'b'. The pattern is over the
// limit and refused with the quota error; the longest accepted pattern of
// the same shape is answered (one pass over the key per request), and
// another client's GET is served in between.
func TestScanAttackIsRefusedAndOthersAreServed(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		attacker, other := e.connect("attacker"), e.connect("other")
		checkResponse(t, attacker.do("SET", strings.Repeat("a", 1<<20), "v"), "+OK\r\n", true)
		checkResponse(t, other.do("SET", "k", "v"), "+OK\r\n", true)
		checkResponse(t, attacker.do("SCAN", "*"+strings.Repeat("a", 16384)+"b"), quota, false)
		checkResponse(t, attacker.do("SCAN", strings.Repeat("?", engine.MaxScanPatternBytes+1)), quota, false)
		// The 1 MiB key uses up a request's matching budget on its own, so
		// the walk takes two requests: the key, then "k".
		if got := scanWalk(t, attacker, "*"+strings.Repeat("a", engine.MaxScanPatternBytes-2)+"b"); len(got) != 0 {
			t.Fatalf("listed %d keys", len(got))
		}
		checkResponse(t, other.do("GET", "k"), "$1\r\nv\r\n", true)
		checkResponse(t, attacker.do("SCAN", "k*"), "*1\r\n*1\r\n$1\r\nk\r\n", true)
	})
}

// TestScanPagesOverMQTT walks more keys than a page holds, with keys
// outside the pattern, on both transports.
func TestScanPagesOverMQTT(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		eng := e.srv.Engine()
		var want []string
		for i := range 250 {
			k := fmt.Sprintf("dev/%03d/temp", i)
			want = append(want, k)
			if err := eng.Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := eng.Put(fmt.Appendf(nil, "dev/%03d/hum", i), []byte("v"), engine.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if got := scanWalk(t, e.connect("scanner"), "dev/*/temp"); !slices.Equal(got, want) {
			t.Fatalf("listed %d keys, want %d", len(got), len(want))
		}
	})
}

// BenchmarkGetDuringScan is another client's GET latency while one
// client walks 100,000 keys with SCAN back to back (embedded server):
// p50 and p99 of the GETs, idle and scanning. Run with -benchtime=2000x.
func BenchmarkGetDuringScan(b *testing.B) {
	for _, scanning := range []bool{false, true} {
		name := "idle"
		if scanning {
			name = "scanning"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, "", []func(*server.Options){func(o *server.Options) { o.Logger = quiet }})
			eng := e.srv.Engine()
			for i := range 100_000 {
				if err := eng.Put(fmt.Appendf(nil, "key/%07d", i), []byte("v"), engine.PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			getter := e.connect("getter")
			stop, done := make(chan struct{}), make(chan struct{})
			var scans int
			if scanning {
				sc := e.connect("scanner")
				go func() {
					defer close(done)
					a := []string{"SCAN", "*"}
					for {
						select {
						case <-stop:
							return
						default:
						}
						sc.send(request{payload: cmd(a...)})
						p := sc.await()
						scans++
						v, err := resp3.ParseResponse(p.Payload)
						if err != nil || len(v.Elems) < 2 {
							a = []string{"SCAN", "*"}
							continue
						}
						a = []string{"SCAN", "*", string(v.Elems[1].Str)}
					}
				}()
			} else {
				close(done)
			}
			req := request{payload: cmd("GET", "key/0000001"), corr: []byte("0123456789abcdef")}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				getter.send(req)
				getter.await()
				lat = append(lat, time.Since(start))
			}
			close(stop)
			<-done
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(scans), "scan-requests")
		})
	}
}
