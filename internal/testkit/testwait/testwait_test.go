package testwait

import (
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	Until(t, 10*time.Second, "the third check", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond checked %d times, want 3", n)
	}
}
