package runtime

import (
	"math/rand/v2"
	"time"
)

// backoff computes reconnect delays: exponential from min, capped at max,
// with "equal jitter" (a random point in the upper half of the step) so
// that clients dropped together do not return together, while the delay
// still grows with every failure in a streak.
type backoff struct {
	min, max time.Duration
	rand     func() float64 // in [0, 1)
}

// delay returns the wait before attempt n of a failure streak. n = 0 is
// the first reconnect after a connection that had been stable: a short
// random pause only.
func (b backoff) delay(n int) time.Duration {
	r := b.rand
	if r == nil {
		r = rand.Float64
	}
	if n <= 0 {
		return time.Duration(r() * float64(b.min))
	}
	d := b.min
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	half := d / 2
	return half + time.Duration(r()*float64(d-half))
}
