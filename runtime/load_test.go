package runtime_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

func TestThousandConcurrentRequestsFromOneClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b coreBackend) {
		url, _ := b.start(t)
		c := coreDial(t, coreConfig(t, url))
		ctx := coreCtx(t)
		const n = 1000
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Appendf(nil, "key-%d", i)
				val := fmt.Appendf(nil, "value-%d", i)
				if _, err := c.Set(ctx, key, val, runtime.SetOptions{}); err != nil {
					errs <- fmt.Errorf("Set %s: %w", key, err)
					return
				}
				got, _, err := c.Get(ctx, key)
				if err != nil || string(got) != string(val) {
					errs <- fmt.Errorf("Get %s = %q, %v", key, got, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if s := c.Stats(); s.InFlight != 0 || s.Errors != 0 || s.Requests < 2*n {
			t.Errorf("Stats after the run: %+v", s)
		}
	})
}
