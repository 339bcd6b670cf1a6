package runtime

import (
	"errors"
	"testing"

	"github.com/ssgen/ssgen/internal/protocol"
)

// TestEveryServiceErrorHasASentinel: each -ERR text of protocol.Errors
// has its sentinel, which a *ServiceError of that text matches.
func TestEveryServiceErrorHasASentinel(t *testing.T) {
	if len(sentinels) != len(protocol.Errors) {
		t.Fatalf("%d sentinels for %d texts", len(sentinels), len(protocol.Errors))
	}
	for _, e := range protocol.Errors {
		s := serviceSentinel(e.Text)
		if s == nil || s.Error() != e.Text || !errors.Is(&ServiceError{Text: e.Text}, s) {
			t.Errorf("%q: sentinel %v", e.Text, s)
		}
	}
}
