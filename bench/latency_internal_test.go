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
