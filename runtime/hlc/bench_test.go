package hlc

import "testing"

func BenchmarkClockNow(b *testing.B) {
	c := NewClock("client-1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Now(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClockUpdate(b *testing.B) {
	c := NewClock("StateStore")
	remote, _ := c.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Update(remote); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("001696374425000:00001:StateStore"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendText(b *testing.B) {
	h := HLC{1696374425000, 1, "StateStore"}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = h.AppendText(buf[:0])
	}
}

var stringSink string

func BenchmarkString(b *testing.B) {
	h := HLC{Wall: 1696374425000, Counter: 1, Node: "StateStore"}
	b.ReportAllocs()
	for b.Loop() {
		stringSink = h.String()
	}
}
