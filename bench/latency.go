package bench

import (
	"slices"
	"time"
)

// Latency summarises a set of samples. Durations are exact order
// statistics of all samples (nearest rank), zero when Count is 0.
type Latency struct {
	Count int           `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// summarize sorts samples in place.
func summarize(samples []time.Duration) Latency {
	n := len(samples)
	if n == 0 {
		return Latency{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return Latency{
		Count: n,
		Mean:  sum / time.Duration(n),
		P50:   rank(samples, 50),
		P90:   rank(samples, 90),
		P99:   rank(samples, 99),
		Max:   samples[n-1],
	}
}

// rank is the nearest-rank percentile of sorted samples: the smallest
// sample with at least p% of the samples at or below it.
func rank(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100 // ceil(n*p/100), 1-based
	return sorted[max(i, 1)-1]
}
