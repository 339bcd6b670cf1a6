package browser_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

var screenshot = flag.Bool("screenshot", false, "rewrite docs/console.png from the test's browser")

// browserBound bounds everything the browser does in one test.
const browserBound = 90 * time.Second

// chromium finds the browser, or skips (fails when SSGEN_REQUIRE_CHROMIUM
// is set).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("SSGEN_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found and SSGEN_REQUIRE_CHROMIUM is set (apt-get install chromium)")
	}
	t.Skip("chromium not found (apt-get install chromium, or set CHROMIUM)")
	return ""
}

// Browser starts a fresh headless Chromium for t and returns a context
// of its first tab, bounded by browserBound.
func Browser(t *testing.T) context.Context {
	t.Helper()
	return browserFor(t, browserBound)
}

func browserFor(t *testing.T, bound time.Duration) context.Context {
	t.Helper()
	path := chromium(t)
	// Not t.TempDir: Chromium's helper processes may still write into
	// the profile for a moment after the browser is gone.
	profile, err := os.MkdirTemp("", "ssgen-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(func(format string, args ...any) {
		// chromedp's protocol tables lag Chromium's: events it does not
		// know (the <dialog> top layer) are reported and harmless.
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "unhandled node event") {
			t.Logf("chromedp: %s", msg)
		}
	}))
	t.Cleanup(func() {
		_ = chromedp.Cancel(bctx) // closes the browser and waits for it
		cancelBrowser()
		cancelAlloc()
		cancel()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove %s", profile)
	})
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// waitText waits (bounded by ctx) until the element sel exists and its
// text contains want, and returns how long that took.
func waitText(ctx context.Context, sel, want string) (time.Duration, error) {
	start := time.Now()
	for {
		var text string
		err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : ""; })()`, sel), &text))
		if err != nil {
			return 0, err
		}
		if strings.Contains(text, want) {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%q never showed %q: %w (last text %.300q)", sel, want, ctx.Err(), text)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestConsoleInChromium(t *testing.T) {
	bctx := Browser(t)

	const token = "browser-test-token-0123456789"
	var con *console.Console
	srv := servertest.New(t, servertest.WithOptions(func(so *server.Options) {
		var err error
		con, err = console.Install(so, console.Options{
			Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: token,
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
	seed(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = "thermostat-app"
	app, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	lease, ok, err := runtime.NewLock(app, []byte("plant/locks/leader"), time.Minute).TryAcquire(ctx)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	t.Cleanup(func() { _ = lease.Release(context.Background()) })
	// A watcher, so that the key shows its watchers and the client its
	// registration.
	wctx, stopWatch := context.WithCancel(context.Background())
	t.Cleanup(stopWatch)
	watching := make(chan struct{})
	go func() {
		close(watching)
		for range app.Watch(wctx, []byte("plant/lines/1/setpoint")) {
		}
	}()
	<-watching

	// Sign in with the printed URL; the console opens.
	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live.on`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading the console: %v", err)
	}
	// Into the folder the application writes to.
	if err := chromedp.Run(bctx, chromedp.Click(`#keylist tr[data-key="plant/"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#crumbs", "plant/"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx, chromedp.Click(`#keylist tr[data-key="plant/lines/"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#keylist", "1/"); err != nil {
		t.Fatal(err)
	}

	// A runtime client writes a key: it appears in the key browser and
	// its request in the trace (the wait is bounded by the browser's
	// context; the time it took is logged, not asserted).
	if _, err := app.Set(ctx, []byte("plant/lines/new-line"), []byte(`{"rate": 42}`), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	took, err := waitText(bctx, "#keylist", "new-line")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the key appeared in the key browser after %v", took)
	if took > time.Second {
		t.Logf("note: over a second (a busy machine?)")
	}
	if _, err := waitText(bctx, "#tracelist tbody", "plant/lines/new-line"); err != nil {
		t.Fatal(err)
	}
	var row string
	if err := chromedp.Run(bctx, chromedp.Text(`#tracelist tbody tr[data-key="plant/lines/new-line"]`, &row, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, "thermostat-app") || !strings.Contains(row, "SET") || !strings.Contains(row, "OK") {
		t.Fatalf("trace row %q", row)
	}

	// Its details, then delete it from the console, confirming.
	if err := chromedp.Run(bctx, chromedp.Click(`#keylist tr[data-key="plant/lines/new-line"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#dvalue", `"rate": 42`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx,
		chromedp.Click(`#delete`, chromedp.ByQuery),
		chromedp.WaitVisible(`#confirm[open]`, chromedp.ByQuery),
		chromedp.Click(`#confirmyes`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := waitText(bctx, "#detail", "Done: 1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := app.Get(ctx, []byte("plant/lines/new-line")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("after the console's delete the store answers %v", err)
	}
	if _, err := waitText(bctx, "#tracelist tbody", "ssgen-console (console)"); err != nil {
		t.Fatal(err)
	}
}

// seed fills the store with what a small plant application keeps.
func seed(t *testing.T, srv *server.Server) {
	t.Helper()
	eng := srv.Engine()
	put := func(k, v string, ttl time.Duration) {
		if err := eng.Put([]byte(k), []byte(v), engine.PutOptions{TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 3; i++ {
		put(fmt.Sprintf("plant/lines/%d/setpoint", i), fmt.Sprintf(`{"celsius": %d.5}`, 20+i), 0)
		put(fmt.Sprintf("plant/lines/%d/status", i), "running", 0)
	}
	put("plant/config", `{"site": "Lyon", "lines": 3}`, 0)
	put("sessions/operator-4", "active", 10*time.Minute)
	put("sensors/hall/temperature", "21.7", 30*time.Second)
}
