package browser_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestConsoleWithTheSchemaInTheStoreInChromium: `ssgen serve --ui
// --schema store`. A key is plain until the schema is published in the
// server; then, without a restart, it shows its declaration and its value
// decoded as JSON.
func TestConsoleWithTheSchemaInTheStoreInChromium(t *testing.T) {
	bctx := Browser(t)
	src, err := os.ReadFile("../../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const token = "browser-test-token-0123456789"
	var con *console.Console
	srv := servertest.New(t, servertest.WithOptions(func(so *server.Options) {
		var err error
		con, err = console.Install(so, console.Options{
			Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: token, SchemaFromStore: true,
			Logger: slog.New(slog.NewTextHandler(servertest.LogWriter(t), nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}))
	if err := con.Start(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = con.Close() })
	put := func(key, value string) {
		t.Helper()
		if err := srv.Engine().Put([]byte(key), []byte(value), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put("thermostats/kitchen/reading", "21.25")
	// A tampered value carrying markup first: not used, and not shown as markup.
	put(schemastore.Key, `{"format":1,"digest":"`+xssProbe+`","name":"x","published":"2026-11-27T17:00:00Z","schema":"version: 1"}`)

	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading the console: %v", err)
	}
	click := func(sel string) {
		t.Helper()
		if err := chromedp.Run(bctx, chromedp.Click(sel, chromedp.ByQuery)); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	wait := func(sel, want string) {
		t.Helper()
		if _, err := waitText(bctx, sel, want); err != nil {
			t.Fatal(err)
		}
	}
	click(`#keylist tr[data-key="thermostats/"]`)
	wait("#crumbs", "thermostats/")
	click(`#keylist tr[data-key="thermostats/kitchen/"]`)
	click(`#keylist tr[data-key="thermostats/kitchen/reading"]`)
	wait("#dvalue", "21.25")
	var meta string
	if err := chromedp.Run(bctx, chromedp.Text(`#dmeta`, &meta, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(meta, "Thermostat.Reading") {
		t.Fatalf("a tampered schema was used: %s", meta)
	}

	published, err := schemastore.Encode("ssgen.yaml", src, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	put(schemastore.Key, string(published))
	if err := chromedp.Run(bctx,
		chromedp.Reload(),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	wait("#dmeta", "Thermostat.Reading")
	wait("#keylist", "Thermostat.Reading")
	var xss bool
	if err := chromedp.Run(bctx, chromedp.Evaluate(`!!window.__xss`, &xss)); err != nil || xss {
		t.Fatalf("markup from $ssgen/schema ran (%v)", err)
	}
}
