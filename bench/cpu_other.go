//go:build !unix

package bench

import "time"

// processCPU is not measured here; CPU per operation is then reported as 0.
func processCPU() time.Duration { return 0 }
