package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

func TestThousandConcurrentRequestsFromOneClient(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		cfg := testConfig(t, url)
		// All 2,000 requests are issued at once and the service takes one
		// client's requests in order: on a loaded machine under -race the
		// last ones wait seconds, which is not what this test is about.
		cfg.Timeout = time.Minute
		c := dialConfig(t, cfg)
		ctx := context.Background()
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
