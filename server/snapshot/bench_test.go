package snapshot

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// benchSnapshot is 100,000 keys like a thermostat fleet's: text keys,
// 16-byte msgpack-like values (base64), a version each, a tenth with a
// TTL.
func benchSnapshot() engine.Snapshot {
	s := engine.Snapshot{Taken: time.Unix(1714564800, 0), Clock: hlc.HLC{Wall: 1714564800000, Node: "StateStore"}}
	for i := range 100_000 {
		it := engine.Item{
			Key:     fmt.Sprintf("thermostats/%06d/setPoint", i),
			Value:   []byte{0x82, 0xa4, 'u', 'n', 'i', 't', 0xa1, 'C', 0xa5, 'v', 'a', 'l', 'u', 'e', 0xcb, byte(i)},
			Version: hlc.HLC{Wall: 1714564790000 + uint64(i), Node: "StateStore"},
		}
		if i%10 == 0 {
			it.TTL = time.Duration(i) * time.Millisecond
		}
		s.Items = append(s.Items, it)
	}
	return s
}

func BenchmarkWrite100k(b *testing.B) {
	s := benchSnapshot()
	var n int64
	b.ReportAllocs()
	for b.Loop() {
		c := &countWriter{}
		if err := Write(c, s); err != nil {
			b.Fatal(err)
		}
		n = c.n
	}
	b.SetBytes(n)
}

func BenchmarkRead100k(b *testing.B) {
	var buf bytes.Buffer
	if err := Write(&buf, benchSnapshot()); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if s, err := Read(bytes.NewReader(buf.Bytes()), Limits{}); err != nil || len(s.Items) != 100_000 {
			b.Fatal(err)
		}
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
