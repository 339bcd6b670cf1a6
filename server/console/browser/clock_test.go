package browser_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// waitGone waits (bounded by ctx) until no element matches sel.
func waitGone(ctx context.Context, sel string) error {
	for {
		var n int
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%q still there: %w", sel, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The console's clock control moves a manual clock (ssgen serve --clock
// manual): keys that fall due leave the key browser; a move back is refused.
func TestConsoleAdvancesAManualClockInChromium(t *testing.T) {
	bctx := Browser(t)
	const token = "browser-clock-token-0123456789"
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := server.NewManualClock(start)
	var con *console.Console
	srv := servertest.New(t, servertest.WithManualClock(clock), servertest.WithOptions(func(so *server.Options) {
		var err error
		con, err = console.Install(so, console.Options{
			Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: token,
			Logger: slog.New(slog.NewTextHandler(servertest.LogWriter(t), nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}))
	con.Handle("/api/clock", srv.ClockHandler(server.ControlHTTP{})) // as ssgen serve mounts it
	if err := con.Start(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = con.Close() })
	// The server stands at noon while clients' clocks run on: keep the
	// keys short-lived relative to the clock, not to the real time.
	for k, ttl := range map[string]time.Duration{"session": 20 * time.Second, "config": 0} {
		if err := srv.Engine().Put([]byte(k), []byte("v"), engine.PutOptions{TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#clock`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading the console: %v", err)
	}
	if _, err := waitText(bctx, "#clocknow", "2026-11-27T12:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#keylist", "session"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx,
		chromedp.SetValue(`#clock input[name="advance"]`, "21s", chromedp.ByQuery),
		chromedp.Click(`#clock button`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#clocknow", "2026-11-27T12:00:21Z"); err != nil {
		t.Fatal(err)
	}
	if err := waitGone(bctx, `#keylist tr[data-key="session"]`); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Engine().Lookup([]byte("config")); !ok {
		t.Fatal("a key without TTL expired")
	}
	if err := chromedp.Run(bctx,
		chromedp.SetValue(`#clock input[name="advance"]`, "-1s", chromedp.ByQuery),
		chromedp.Click(`#clock button`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#clockmsg", "only moves forward"); err != nil {
		t.Fatal(err)
	}
	if got := clock.Now(); !got.Equal(start.Add(21 * time.Second)) {
		t.Fatalf("clock at %v after a refused move", got)
	}
}
