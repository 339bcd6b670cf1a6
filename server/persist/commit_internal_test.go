package persist

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server/engine"
)

// A Backend's transactions stay within its limits and always hold whole
// engine writes.
func TestBackendTransactionsCutAtWholeWrites(t *testing.T) {
	q := func(seq uint64, size int) queuedChange {
		return queuedChange{seq: seq, Change: engine.Change{Record: engine.Record{Key: "k", Value: []byte(strings.Repeat("v", size-1))}}}
	}
	for _, tc := range []struct {
		name   string
		limits BackendLimits
		batch  []queuedChange
		want   int
	}{
		{"no limits", BackendLimits{}, []queuedChange{q(1, 1), q(2, 1), q(3, 1)}, 3},
		{"within", BackendLimits{MaxChanges: 3}, []queuedChange{q(1, 1), q(2, 1), q(3, 1)}, 3},
		{"over the changes", BackendLimits{MaxChanges: 2}, []queuedChange{q(1, 1), q(2, 1), q(3, 1)}, 2},
		{"a write is not split", BackendLimits{MaxChanges: 2}, []queuedChange{q(1, 1), q(2, 1), q(2, 1)}, 1},
		{"over the bytes", BackendLimits{MaxBytes: 10}, []queuedChange{q(1, 4), q(2, 4), q(3, 4)}, 2},
		{"one write over the limits goes alone", BackendLimits{MaxBytes: 10}, []queuedChange{q(1, 20), q(2, 1)}, 1},
		{"one write of many changes goes alone", BackendLimits{MaxChanges: 1}, []queuedChange{q(1, 1), q(1, 1), q(1, 1), q(2, 1)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewBackendCommit(nil, tc.limits, nil, 1, nil)
			c.backend = nopBackend{}
			if got := c.cut(tc.batch); got != tc.want {
				t.Fatalf("cut = %d, want %d", got, tc.want)
			}
		})
	}
}

type nopBackend struct{}

func (nopBackend) Commit([]engine.Change) error { return nil }
