package browser_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/bench"
)

// TestBenchWithChromium is `ssgen bench --console` with a real browser as
// the live view: headless Chromium has the console open during the
// segments that measure it. It runs only when SSGEN_BENCH_CHROMIUM is set
// (a benchmark, not a check: it prints the ratios and asserts nothing
// about speed):
//
//	SSGEN_BENCH_CHROMIUM=30s go test -run TestBenchWithChromium -v ./server/console/browser
func TestBenchWithChromium(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SSGEN_BENCH_CHROMIUM"))
	if err != nil {
		t.Skip("set SSGEN_BENCH_CHROMIUM to a duration to run it")
	}
	bctx := browserFor(t, 3*d+2*time.Minute)
	cfg := bench.Config{
		Clients: 4, InFlight: 16, Duration: d, Segments: 8, Console: true,
		ConsoleClient: func(ctx context.Context, url string) func() {
			if err := chromedp.Run(bctx, chromedp.Navigate(url), chromedp.WaitVisible(`#live.on`, chromedp.ByQuery)); err != nil {
				t.Errorf("opening the console: %v", err)
			}
			return func() { _ = chromedp.Run(bctx, chromedp.Navigate("about:blank")) }
		},
	}
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = rep.WriteText(&b)
	t.Log("\n" + b.String())
}
