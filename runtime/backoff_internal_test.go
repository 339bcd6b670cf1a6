package runtime

import (
	"testing"
	"time"
)

func TestBackoffGrowsWithTheStreakAndStaysCapped(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		b := backoff{min: 100 * time.Millisecond, max: 2 * time.Second, rand: func() float64 { return r }}
		if d := b.delay(0); d < 0 || d >= b.min {
			t.Errorf("r=%v: delay(0) = %v, want [0, min)", r, d)
		}
		prevLow := time.Duration(0)
		for n := 1; n <= 12; n++ {
			d := b.delay(n)
			step := min(b.min<<(n-1), b.max)
			if d < step/2 || d > step {
				t.Errorf("r=%v: delay(%d) = %v, want in [%v, %v]", r, n, d, step/2, step)
			}
			if step/2 < prevLow {
				t.Errorf("lower bound shrank at %d", n)
			}
			prevLow = step / 2
		}
		if d := b.delay(1000); d > b.max {
			t.Errorf("delay(1000) = %v beyond the cap", d)
		}
	}
}
