package browser_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/examples/thermostat/thermostat"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// longClientID is longer than the trace's client column is wide: it
// would wrap inside the word if the page let it.
const longClientID = "kitchen-thermostat-controller-7f3a9c2e04b1"

// xssProbe is markup where the page shows data: a key name, a stored
// value (which a decoding error quotes) and a trace row carry it.
const xssProbe = `<img src=x onerror=window.__xss=1>`

// TestConsoleWithSchemaInChromium runs the console as `ssgen serve --ui
// --schema` serves it, against the thermostat example's schema and an
// application that writes through its generated package: a declared key
// shows its declaration name and its value decoded as JSON, Edit offers
// that JSON and writes it back under the key's guard lock (read back with
// the generated package), the address bar keeps the folder, key and trace
// filter across a reload, a trace row opens its key, and Delete of the
// fenced key asks how to fence it in a dialog, not window.prompt.
func TestConsoleWithSchemaInChromium(t *testing.T) {
	bctx := Browser(t)
	sc, err := schema.LoadFile("../../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const token = "browser-test-token-0123456789"
	var con *console.Console
	srv := servertest.New(t, servertest.WithOptions(func(so *server.Options) {
		var err error
		con, err = console.Install(so, console.Options{
			Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: token, Schema: sc,
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

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = longClientID
	app, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	store := thermostat.New(app)
	kitchen, err := store.Thermostat("kitchen")
	if err != nil {
		t.Fatal(err)
	}
	hall, err := store.Thermostat("hall")
	if err != nil {
		t.Fatal(err)
	}
	// The application writes its set point under the Edit lease, so the
	// key carries that lock's fencing token.
	if _, _, err := kitchen.SetPoint().Update(ctx, func(thermostat.SetPoint, bool) (thermostat.SetPoint, error) {
		return thermostat.SetPoint{Celsius: 20.5, Mode: thermostat.ModeHeat, UpdatedBy: "operator-1"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		k   *runtime.Key[float64]
		val float64
	}{{kitchen.Reading(), 21.25}, {hall.Reading(), 19.5}} {
		if _, err := r.k.Set(ctx, r.val, runtime.WithTTL(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}

	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		// window.prompt must not be how the page asks anything.
		chromedp.Evaluate(`window.prompt = () => { window.__prompted = true; return null; }`, nil),
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

	// Down to the kitchen's keys: each declared key names its declaration.
	click(`#keylist tr[data-key="thermostats/"]`)
	wait("#crumbs", "thermostats/")
	click(`#keylist tr[data-key="thermostats/kitchen/"]`)
	wait("#keylist", "setPoint")
	var declared map[string]string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("#keylist tbody tr")].map(tr => [tr.dataset.key, (tr.querySelector(".declared") || {}).textContent || ""]))`, &declared)); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"thermostats/kitchen/setPoint": "Thermostat.SetPoint",
		"thermostats/kitchen/reading":  "Thermostat.Reading",
	} {
		if declared[k] != want {
			t.Errorf("key list: %s declared %q, want %q (all: %q)", k, declared[k], want, declared)
		}
	}

	// The set point: its declaration, and its value decoded as JSON.
	click(`#keylist tr[data-key="thermostats/kitchen/setPoint"]`)
	wait("#dmeta", "Thermostat.SetPoint")
	wait("#dmeta", "lock Thermostat.Edit (thermostats/kitchen/edit)")
	wait("#dvalue", `"celsius": 20.5`)
	var meta string
	if err := chromedp.Run(bctx, chromedp.Text(`#dmeta`, &meta, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(meta, "undefined") {
		t.Fatalf("the details say undefined:\n%s", meta)
	}

	// The address bar holds the folder and the key; a trace filter joins
	// them; a reload shows the same view.
	if err := chromedp.Run(bctx,
		chromedp.SetValue(`#tracefilter input[name="client"]`, longClientID, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#tracefilter").dispatchEvent(new Event("change"))`, nil),
	); err != nil {
		t.Fatal(err)
	}
	wantQuery := url.Values{"prefix": {"thermostats/kitchen/"}, "key": {"thermostats/kitchen/setPoint"}, "tclient": {longClientID}}
	var search string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`location.search`, &search)); err != nil {
		t.Fatal(err)
	}
	if got, err := url.ParseQuery(strings.TrimPrefix(search, "?")); err != nil || fmt.Sprint(got) != fmt.Sprint(wantQuery) {
		t.Fatalf("the address says %q, want %v", search, wantQuery)
	}
	if err := chromedp.Run(bctx,
		chromedp.Reload(),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.prompt = () => { window.__prompted = true; return null; }`, nil),
	); err != nil {
		t.Fatal(err)
	}
	wait("#crumbs", "kitchen/")
	wait("#dname", "thermostats/kitchen/setPoint")
	wait("#dvalue", `"celsius": 20.5`)
	var filter string
	if err := chromedp.Run(bctx, chromedp.Value(`#tracefilter input[name="client"]`, &filter, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if filter != longClientID {
		t.Fatalf("after a reload the trace filter is %q", filter)
	}
	wait("#keylist", "Thermostat.Reading")

	// Edit: the form holds the JSON, takes the guard lock, and the write
	// reads back through the generated package.
	click(`#edit`)
	var form struct {
		Value    string `json:"value"`
		Encoding string `json:"encoding"`
		Guard    bool   `json:"guard"`
		GuardRow bool   `json:"guardRow"`
		Name     string `json:"name"`
	}
	if err := chromedp.Run(bctx, chromedp.Evaluate(`(() => { const f = document.querySelector("#setform"); return {value: f.value.value, encoding: f.encoding.value, guard: f.guard.checked, guardRow: !document.querySelector("#guardrow").hidden, name: document.querySelector("#guardname").textContent}; })()`, &form)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(form.Value, "{") || !strings.Contains(form.Value, `"mode": "heat"`) || form.Encoding != "schema" || !form.Guard || !form.GuardRow || !strings.Contains(form.Name, "Thermostat.Edit") {
		t.Fatalf("Edit filled the form with %+v", form)
	}
	// The form is the edit of that key: under its details and named after
	// it, not under the Keys panel's "New key".
	var placed string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`(() => { const b = document.querySelector("#newkey"); return (b.closest("#detail") ? "detail" : "keys") + ": " + b.querySelector("summary").textContent; })()`, &placed)); err != nil {
		t.Fatal(err)
	}
	if placed != "detail: Edit thermostats/kitchen/setPoint" {
		t.Fatalf("after Edit… the form is in %q, want under the key's details, named after it", placed)
	}
	if *screenshot {
		shootSchema(t, bctx)
	}
	newValue := `{"celsius": 23.5, "mode": "cool", "updatedBy": "console"}`
	if err := chromedp.Run(bctx,
		chromedp.SetValue(`#setform textarea[name="value"]`, newValue, chromedp.ByQuery),
		chromedp.Click(`#setform button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#confirm[open]`, chromedp.ByQuery),
		chromedp.Click(`#confirmyes`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	wait("#detail", "Done: OK")
	got, err := kitchen.SetPoint().Get(ctx)
	if err != nil || got.Value != (thermostat.SetPoint{Celsius: 23.5, Mode: thermostat.ModeCool, UpdatedBy: "console"}) {
		t.Fatalf("the generated package reads back %+v, %v", got.Value, err)
	}
	wait("#dvalue", `"celsius": 23.5`)

	// The form's radios sit beside their labels.
	var besides []string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`[...document.querySelectorAll("#setform .row label")].filter(l => l.querySelector("input[type=radio],input[type=checkbox]")).map(l => {
		const box = l.querySelector("input").getBoundingClientRect();
		const r = document.createRange(); r.selectNodeContents(l); const text = [...r.getClientRects()].filter(x => x.width > 0 && x.left >= box.right - 1);
		const beside = text.length > 0 && text.every(x => x.top < box.bottom && x.bottom > box.top);
		return l.textContent.trim() + ": " + (beside ? "beside" : "not beside");
	})`, &besides)); err != nil {
		t.Fatal(err)
	}
	if len(besides) < 4 || strings.Contains(strings.Join(besides, "\n"), "not beside") {
		t.Fatalf("radios and their labels:\n%s", strings.Join(besides, "\n"))
	}

	// The client id is one word on one line, in the trace and the clients.
	wait("#tracelist tbody", "thermostats/kitchen/reading")
	wait("#clientlist", longClientID)
	var lines map[string]int
	if err := chromedp.Run(bctx, chromedp.Evaluate(`(() => { const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e); return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; };
		return { trace: lines(document.querySelector("#tracelist tbody td.cid")), clients: lines(document.querySelector("#clientlist .cid")) }; })()`, &lines)); err != nil {
		t.Fatal(err)
	}
	if lines["trace"] != 1 || lines["clients"] != 1 {
		t.Fatalf("the client id takes %v lines", lines)
	}

	// A trace row opens its key, in its folder.
	click(`#crumbs a[data-prefix=""]`)
	wait("#keylist", "thermostats/")
	if _, err := hall.Reading().Get(ctx); err != nil {
		t.Fatal(err)
	}
	wait("#tracelist tbody", "thermostats/hall/reading")
	click(`#tracelist tbody tr[data-key="thermostats/hall/reading"]`)
	wait("#dname", "thermostats/hall/reading")
	wait("#dvalue", "19.5")
	wait("#crumbs", "hall/")
	if err := chromedp.Run(bctx, chromedp.Evaluate(`location.search`, &search)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(search, "prefix=thermostats%2Fhall%2F") || !strings.Contains(search, "key=thermostats%2Fhall%2Freading") {
		t.Fatalf("after opening a key from the trace the address says %q", search)
	}

	// A new key typed by hand: the schema is asked about it, and it is
	// written as JSON under its guard lock, as ssgen set writes it.
	if err := chromedp.Run(bctx,
		chromedp.Evaluate(`document.querySelector("#newkey").open = true; document.querySelector('#setform input[name="key"]').value = ""`, nil),
		chromedp.SendKeys(`#setform input[name="key"]`, "thermostats/hall/setPoint", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#setform input[name="key"]').blur()`, nil),
	); err != nil {
		t.Fatal(err)
	}
	wait("#guardrow:not([hidden])", "Thermostat.Edit (thermostats/hall/edit)")
	var enc string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`document.querySelector("#setform").encoding.value`, &enc)); err != nil {
		t.Fatal(err)
	}
	if enc != "schema" {
		t.Fatalf("a declared key typed by hand is written as %q", enc)
	}
	if err := chromedp.Run(bctx,
		chromedp.SetValue(`#setform textarea[name="value"]`, `{"celsius": 18, "mode": "off"}`, chromedp.ByQuery),
		chromedp.Click(`#setform button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#confirm[open]`, chromedp.ByQuery),
		chromedp.Click(`#confirmyes`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	wait("#dname", "thermostats/hall/setPoint")
	if got, err := hall.SetPoint().Get(ctx); err != nil || got.Value != (thermostat.SetPoint{Celsius: 18, Mode: thermostat.ModeOff}) {
		t.Fatalf("the generated package reads back %+v, %v", got.Value, err)
	}
	if ent, ok := srv.Engine().Lookup([]byte("thermostats/hall/setPoint")); !ok || ent.FencingToken.IsZero() {
		t.Fatalf("the new guarded key is not fenced by its guard lock: %+v", ent)
	}

	// Delete of the fenced set point asks how to fence it, in a dialog.
	click(`#crumbs a[data-prefix="thermostats/"]`)
	click(`#keylist tr[data-key="thermostats/kitchen/"]`)
	wait("#keylist", "setPoint")
	click(`#keylist tr[data-key="thermostats/kitchen/setPoint"]`)
	wait("#dvalue", `"celsius": 23.5`)
	click(`#delete`)
	if err := chromedp.Run(bctx, chromedp.WaitVisible(`#confirm[open] #fence`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	wait("#fence", "Thermostat.Edit")
	var how string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`document.querySelector('input[name="fence"]:checked').value`, &how)); err != nil {
		t.Fatal(err)
	}
	if how != "guard" {
		t.Fatalf("the dialog offers %q first, want the guard lock", how)
	}
	click(`#confirmyes`)
	wait("#detail", "Done: 1")
	if _, err := kitchen.SetPoint().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("after the console's delete the generated package reads %v", err)
	}

	// Data stays text: markup in a key name, in a value, in a decoding
	// error and in the trace is shown, never run.
	if err := srv.Engine().Put([]byte("thermostats/hall/heater"), []byte(xssProbe), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Set(ctx, []byte("thermostats/kitchen/"+xssProbe), []byte(xssProbe), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("#keylist", "<img")
	click(`#keylist tr[data-key="thermostats/kitchen/` + xssProbe + `"]`)
	wait("#dvalue", xssProbe)
	wait("#tracelist tbody", xssProbe)
	click(`#crumbs a[data-prefix="thermostats/"]`)
	click(`#keylist tr[data-key="thermostats/hall/"]`)
	wait("#keylist", "Thermostat.Heater")
	click(`#keylist tr[data-key="thermostats/hall/heater"]`)
	wait("#dmeta", "Thermostat.Heater")
	wait("#dvalue", xssProbe)

	var probes struct {
		XSS      bool `json:"xss"`
		Prompted bool `json:"prompted"`
		Images   int  `json:"images"`
	}
	if err := chromedp.Run(bctx, chromedp.Evaluate(`({xss: !!window.__xss, prompted: !!window.__prompted, images: document.querySelectorAll("img").length})`, &probes)); err != nil {
		t.Fatal(err)
	}
	if probes.XSS || probes.Images != 0 {
		t.Fatalf("data became markup: %+v", probes)
	}
	if probes.Prompted {
		t.Fatal("the page used window.prompt")
	}
}

// shootSchema writes docs/console.png: the thermostat's keys with their
// declarations, the set point decoded as JSON, and Edit's form holding
// that JSON with the guard lock to take.
func shootSchema(t *testing.T, bctx context.Context) {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // let the last stream batch render
	var png []byte
	if err := chromedp.Run(bctx, chromedp.FullScreenshot(&png, 100)); err != nil { // quality 100 is PNG
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "docs", "console.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(png))
}
