package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTerminalSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, naïve", "plain text, naïve"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"boom \x1b[31mRED", `boom \u001B[31mRED`},
		{"bell\a nul\x00", `bell\u0007 nul\u0000`},
		{"over\rwrite", `over\u000Dwrite`},
		{"rtl \u202eevil", `rtl \u202Eevil`},
		{"bad \xff byte", `bad \xFF byte`},
		{"c1 \u009b", `c1 \u009B`},
	} {
		if got := terminalSafe(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// Attack (review of #30, F4): a server (another ssgen, a proxy in front
// of one) answers with text holding terminal escapes: a chaos rule named
// with ESC, an error text with ESC and U+202E. ssgen prints them as
// escapes, in the listing and in its error line.
func TestCLIEscapesServerText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			http.Error(w, "boom \x1b[31mRED \u202eevil", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"rules":[{"name":"a\u001b]0;pwned\u0007b","effect":"error","error":"x\u001b[2J","fired":1}]}`))
	}))
	defer srv.Close()
	code, out, errs := runVerb(t, "", "chaos", "--http", srv.URL)
	if code != 0 || strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, `a\u001B]0;pwned\u0007b`) {
		t.Fatalf("chaos listing: %d %q %q", code, out, errs)
	}
	code, _, errs = runVerb(t, "", "chaos", "--http", srv.URL, "--clear")
	if code == 0 || strings.ContainsAny(errs, "\x1b\u202e") || !strings.Contains(errs, `boom \u001B[31mRED \u202Eevil`) {
		t.Fatalf("chaos --clear refused: %d %q", code, errs)
	}
}
