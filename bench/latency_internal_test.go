package bench

import (
	"testing"
	"time"
)

func TestNearestRankPercentiles(t *testing.T) {
	s := make([]time.Duration, 100)
	for i := range s {
		s[i] = time.Duration(100-i) * time.Millisecond // unsorted on purpose
	}
	l := summarize(s)
	if l.Count != 100 || l.P50 != 50*time.Millisecond || l.P90 != 90*time.Millisecond ||
		l.P99 != 99*time.Millisecond || l.Max != 100*time.Millisecond {
		t.Errorf("summary %+v", l)
	}
	if one := summarize([]time.Duration{7}); one.P50 != 7 || one.P99 != 7 || one.Max != 7 {
		t.Errorf("one sample: %+v", one)
	}
	if none := summarize(nil); none != (Latency{}) {
		t.Errorf("no samples: %+v", none)
	}
}

func TestMixPickFollowsWeights(t *testing.T) {
	m := Mix{OpGet: 2, OpSet: 0, OpDel: 1}
	got := []Op{m.pick(0), m.pick(1), m.pick(2)}
	want := []Op{OpGet, OpGet, OpDel}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pick(%d) = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestSegmentsShareTheBound(t *testing.T) {
	cfg := Config{Requests: 50, Duration: 10 * time.Second}
	sum := 0
	for r := range 3 {
		b := segmentBound(cfg, r, 3)
		sum += b.requests
		if b.requests == 0 || b.duration != 10*time.Second/3 {
			t.Errorf("segment %d: %+v", r, b)
		}
	}
	if sum != 50 {
		t.Errorf("segments hold %d requests, want 50", sum)
	}
	if c, _ := (Config{Requests: 2, Segments: 5}).withDefaults(); c.Segments != 2 {
		t.Errorf("%d segments for 2 requests, want 2", c.Segments)
	}
}
