package bench

import (
	"context"
	"math/rand/v2"
	"time"
)

// workload is one thing a run measures (ssgen itself, or a baseline),
// driven in segments interleaved with the others so that all of them see
// the same share of a busy machine's noise.
type workload struct {
	name    string
	workers int
	do      func(w int, rnd *rand.Rand) (Op, error)
	close   func()
	// before, when set, runs before each of the workload's segments and
	// returns what runs after it (the console's stream is attached only
	// for its own segments).
	before func() (after func())
	err    error // setup failed; the workload is reported, not run
	runs   []driven
}

// segmentBound is segment r's share (of rounds) of the run's bound; the
// first round takes the remainder of the count.
func segmentBound(cfg Config, r, rounds int) bound {
	b := bound{duration: cfg.Duration / time.Duration(rounds)}
	if cfg.Requests > 0 {
		b.requests = cfg.Requests / rounds
		if r == 0 {
			b.requests += cfg.Requests % rounds
		}
	}
	return b
}

// interleave runs every ready workload once per segment, in turn.
func interleave(ctx context.Context, cfg Config, loads []*workload) {
	for r := range cfg.Segments {
		warm := 0
		if r == 0 {
			warm = cfg.Warmup
		}
		b := segmentBound(cfg, r, cfg.Segments)
		for _, l := range loads {
			if l.err == nil && ctx.Err() == nil {
				after := func() {}
				if l.before != nil {
					after = l.before()
				}
				l.runs = append(l.runs, drive(ctx, l.workers, warm, uint64(r)+0x5eed, b, l.do))
				after()
			}
		}
	}
}
