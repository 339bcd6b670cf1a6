package browser_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/servertest"
)

// The console shows the chaos rules in force with their counters, and
// replaces and clears them; an injected effect shows in the trace with its
// rule.
func TestConsoleChaosRulesInChromium(t *testing.T) {
	bctx := Browser(t)
	const token = "browser-chaos-token-0123456789"
	var con *console.Console
	srv := servertest.New(t, servertest.WithChaos(server.ChaosRule{
		Name: "broken config", Verbs: []string{"GET"}, Key: "config/*", Effect: server.ChaosError, Error: "the quota has been exceeded",
	}), servertest.WithOptions(func(so *server.Options) {
		var err error
		con, err = console.Install(so, console.Options{
			Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: token,
			Logger: slog.New(slog.NewTextHandler(servertest.LogWriter(t), nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}))
	con.Handle("/api/chaos", srv.ChaosHandler(server.ControlHTTP{})) // as ssgen serve mounts it
	if err := con.Start(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = con.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = "chaos-app"
	app, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })

	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#chaos`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live.on`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading the console: %v", err)
	}
	if _, err := waitText(bctx, "#chaoslist", "broken config"); err != nil {
		t.Fatal(err)
	}
	// The form starts with the rules in force.
	var text string
	if err := chromedp.Run(bctx, chromedp.Value(`#chaosform textarea`, &text, chromedp.ByQuery)); err != nil || !strings.Contains(text, `"broken config"`) {
		t.Fatalf("form %q %v", text, err)
	}
	// The application meets the rule: the trace names it, the counter moves.
	if _, _, err := app.Get(ctx, []byte("config/site")); err == nil {
		t.Fatal("GET under the rule succeeded")
	}
	if _, err := waitText(bctx, "#tracelist tbody", `injected by chaos rule "broken config"`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx, chromedp.Click(`#chaosrefresh`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#chaoslist tbody tr:first-child td:nth-child(4)", "1"); err != nil {
		t.Fatal(err)
	}
	// Replaced from the form; a bad rule is refused and says why.
	for _, c := range []struct{ rules, says string }{
		{"rules:\n  - effect: explode\n", "rules[0]"},
		{"rules:\n  - name: slow writes\n    verbs: [SET]\n    effect: delay\n    delay: 10ms\n    count: 2\n", "Applied: 1 rule."},
	} {
		if err := chromedp.Run(bctx,
			chromedp.SetValue(`#chaosform textarea`, c.rules, chromedp.ByQuery),
			chromedp.Click(`#chaosform button[type="submit"]`, chromedp.ByQuery),
		); err != nil {
			t.Fatal(err)
		}
		if _, err := waitText(bctx, "#chaosmsg", c.says); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := waitText(bctx, "#chaoslist", "slow writes"); err != nil {
		t.Fatal(err)
	}
	if st := srv.Chaos(); len(st) != 1 || st[0].Name != "slow writes" {
		t.Fatalf("rules in force %+v", st)
	}
	if err := chromedp.Run(bctx, chromedp.Click(`#chaosclear`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#chaoslist", "no rules"); err != nil {
		t.Fatal(err)
	}
	if srv.Chaos() != nil {
		t.Fatal("rules left after Clear all")
	}
}
