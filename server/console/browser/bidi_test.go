package browser_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/servertest"
)

// Issue #25 (F5): a client id with a bidi control, "evil\u202Enimda", was
// shown raw in the trace and the client list, where it reads as
// "evil" and "admin" reversed, another name. The console shows such
// characters as visible escapes (keys that are not plain text were
// already shown quoted), and isolates client text from its neighbours'
// direction.
func TestConsoleShowsBidiControlsAsEscapesInChromium(t *testing.T) {
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

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = "evil\u202Enimda"
	evil, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = evil.Close() })
	// Rendered by the server: the key list of the first page.
	if _, err := evil.Set(ctx, []byte("first\u2066key"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx,
		chromedp.Navigate(con.LoginURL()),
		chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live.on`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("loading the console: %v", err)
	}
	// Live: the trace and the client list.
	if _, err := evil.Set(ctx, []byte("later\u202Ekey"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ sel, want string }{
		// Keys that are not plain text are shown quoted, Go-style.
		{"#keylist", `"first\u2066key"`},
		{"#tracelist tbody", `evil\u202Enimda`},
		{"#tracelist tbody", `"later\u202ekey"`},
		{"#clientlist tbody", `evil\u202Enimda`},
	} {
		wctx, cancel := context.WithTimeout(bctx, 15*time.Second)
		_, err := waitText(wctx, w.sel, w.want)
		cancel()
		if err != nil {
			var text string
			_ = chromedp.Run(bctx, chromedp.Evaluate(`document.body.innerText`, &text))
			t.Fatalf("%s: %v\npage: %q", w.sel, err, text)
		}
	}
	var raw bool
	var isolate string
	if err := chromedp.Run(bctx,
		chromedp.Evaluate(`/[\u202A-\u202E\u2066-\u2069]/.test(document.body.innerText + [...document.querySelectorAll("[title]")].map((e) => e.title).join(""))`, &raw),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("#clientlist .cid")).unicodeBidi`, &isolate),
	); err != nil {
		t.Fatal(err)
	}
	if raw {
		var text string
		_ = chromedp.Run(bctx, chromedp.Evaluate(`document.body.innerText`, &text))
		t.Fatalf("a bidi control reached the page as itself: %q", firstBidi(text))
	}
	if isolate != "isolate" {
		t.Errorf("a client id's unicode-bidi is %q, want isolate", isolate)
	}
}

func firstBidi(s string) string {
	for i, r := range s {
		if (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') {
			return fmt.Sprintf("%q at %d in …%s…", r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	return "none found"
}
