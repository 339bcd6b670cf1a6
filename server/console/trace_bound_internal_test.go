package console

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/ssgen/ssgen/server"
)

// hostileEvent is a request whose every client-controlled string is as
// long as MQTT allows (64 KiB) and distinct from every other event's: a
// client id, a __protVer quoted in the reason and the 505's message, a
// __ts quoted as the version.
func hostileEvent(i int) *server.RequestEvent {
	big := func(c byte) string {
		b := []byte(strings.Repeat(string(c), 64<<10))
		b[0], b[1] = 'a'+byte(i%26), 'a'+byte(i/26%26) // each event's own memory
		return string(b)
	}
	return &server.RequestEvent{
		Start: time.Now(), Client: big('c'), Verb: "SET", Key: []byte(big('k')),
		Status: 505, Version: big('v'), Error: big('e'), Reason: "unsupported __protVer " + big('p'),
	}
}

// TestTraceRingMemoryIsBounded reproduces issue #25: each trace record kept
// a client's strings whole (up to 64 KiB each), so one client grew a
// console by ~600 MiB in seconds. Filled with hostile records, the ring
// must hold at most traceRecordBytes per record beyond its fixed fields,
// by its buffers' capacities and by the heap measured.
func TestTraceRingMemoryIsBounded(t *testing.T) {
	const n = 256
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	c, err := Install(&server.Options{}, Options{Addr: "127.0.0.1:0", TraceSize: n})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * n { // twice round: buffers are reused, not grown
		c.onRequest(hostileEvent(i))
	}
	after := heap()
	held := 0
	c.trace.read(0, func(_ uint64, r *traceRecord) bool {
		held += cap(r.client) + cap(r.key) + cap(r.version) + cap(r.errText) + cap(r.reason) + len(r.verb)
		for _, b := range [][]byte{r.client, r.version, r.errText, r.reason} {
			if !utf8.Valid(b) || !strings.HasSuffix(string(b), clipMark) {
				t.Fatalf("a cut string %q…", b[:16])
			}
		}
		return true
	})
	if held > n*traceRecordBytes {
		t.Fatalf("records hold %d bytes, %d each, over the bound of %d", held, held/n, traceRecordBytes)
	}
	slot := int(unsafe.Sizeof(slot[traceRecord]{}))
	bound := uint64(2*n*(traceRecordBytes+slot)) + 1<<20 // both rings, and 1 MiB of slack for the GC's noise
	if after > before && after-before > bound {
		t.Fatalf("the heap grew by %d bytes for a console with %d-record rings, over %d", after-before, n, bound)
	}
	t.Logf("%d records: %d bytes of strings held (%d each, bound %d), heap +%d KiB", n, held, held/n, traceRecordBytes, (after-before)>>10)
	runtime.KeepAlive(c)
}

func TestKeepCutsAtACharacter(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		{"abcdefghé", 9, "abcdefgh…"},
		{"€€€€", 7, "€€…"},
	} {
		if got := string(keep(nil, tc.s, tc.max)); got != tc.want {
			t.Errorf("keep(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// TestTraceMarksOnlyExecAsTheConsole: a request over MQTT whose client id
// is the console's (an external-mode __srcId, say) is not marked as the
// console's; only the console's own Server.Exec is (issue #25).
func TestTraceMarksOnlyExecAsTheConsole(t *testing.T) {
	c, err := Install(&server.Options{}, Options{Addr: "127.0.0.1:0", TraceSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	c.onRequest(&server.RequestEvent{Client: DefaultClientID, Verb: "GET", Status: 200})
	c.onRequest(&server.RequestEvent{Client: DefaultClientID, Verb: "SET", Status: 200, Exec: true})
	c.onRequest(&server.RequestEvent{Client: "other-tool", Verb: "SET", Status: 200, Exec: true})
	var marked []bool
	c.trace.read(0, func(_ uint64, r *traceRecord) bool { marked = append(marked, r.internal); return true })
	if len(marked) != 3 || marked[0] || !marked[1] || marked[2] {
		t.Fatalf("marked as the console's: %v, want only the console's own Exec", marked)
	}
}
