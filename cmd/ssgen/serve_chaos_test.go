package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
)

func TestChaosVerbAndServeChaos(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "chaos.yaml")
	if err := os.WriteFile(file, []byte("rules:\n  - name: broken config\n    verbs: [GET]\n    key: config/*\n    effect: error\n    error: the quota has been exceeded\n    count: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mqttURL, consoleURL := startServe(t, "--chaos", file, "--ui")
	code, _, errs := runVerb(t, "", "get", "--broker", mqttURL, "--raw", "config/a")
	if code == 0 || !strings.Contains(errs, "the quota has been exceeded") {
		t.Fatalf("get under the rule: %d %q", code, errs)
	}
	code, out, errs := runVerb(t, "", "chaos", "--http", consoleURL)
	if code != 0 || out != "broken config: GET key \"config/*\" -> error \"the quota has been exceeded\"; fired 1, 0 left\n" {
		t.Fatalf("chaos: %d %q %q", code, out, errs)
	}
	// The count is spent: the key is simply missing.
	if code, _, errs := runVerb(t, "", "get", "--broker", mqttURL, "--raw", "config/a"); code != exitNegative {
		t.Fatalf("get after the count: %d %q", code, errs)
	}
	// Replaced from stdin, then cleared.
	code, out, errs = runVerb(t, "rules: [{key: slow, effect: delay, delay: 10ms}]", "chaos", "--http", consoleURL, "-")
	if code != 0 || out != "rule 1: any verb key \"slow\" -> delay 10ms; fired 0\n" {
		t.Fatalf("chaos -: %d %q %q", code, out, errs)
	}
	if code, out, errs := runVerb(t, "", "chaos", "--http", consoleURL, "--clear"); code != 0 || out != "no chaos rules\n" {
		t.Fatalf("chaos --clear: %d %q %q", code, out, errs)
	}
	// A bad file is refused, naming it and the rule; the rules in force stay.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - effect: explode\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runVerb(t, "", "chaos", "--http", consoleURL, bad); code != exitUsage || !strings.Contains(errs, "bad.yaml") || !strings.Contains(errs, "rules[0]") {
		t.Fatalf("chaos bad.yaml: %d %q", code, errs)
	}
	if code, _, errs := runVerb(t, "", "serve", "--listen", "127.0.0.1:0", "--chaos", bad); code != exitUsage || !strings.Contains(errs, "explode") {
		t.Fatalf("serve --chaos bad.yaml: %d %q", code, errs)
	}
	// A file without rules would clear them all unasked: refused, pointing
	// to --clear (review of #30, F7); the rule put above stays.
	if code, _, errs := runVerb(t, "rules: [{key: kept, effect: drop}]", "chaos", "--http", consoleURL, "-"); code != 0 {
		t.Fatalf("chaos -: %d %q", code, errs)
	}
	empty := filepath.Join(dir, "empty.yaml")
	writeTestFile(t, empty, []byte("# rules to come\n"))
	if code, _, errs := runVerb(t, "", "chaos", "--http", consoleURL, empty); code != exitUsage || !strings.Contains(errs, "ssgen chaos --clear") {
		t.Fatalf("chaos empty.yaml: %d %q", code, errs)
	}
	if code, _, errs := runVerb(t, "", "serve", "--listen", "127.0.0.1:0", "--chaos", empty); code != exitUsage || !strings.Contains(errs, "no rules") {
		t.Fatalf("serve --chaos empty.yaml: %d %q", code, errs)
	}
	if code, out, _ := runVerb(t, "", "chaos", "--http", consoleURL); code != 0 || !strings.Contains(out, `key "kept"`) {
		t.Fatalf("rules after the empty file: %q", out)
	}
	for _, args := range [][]string{
		{"chaos"},
		{"chaos", "--http", consoleURL, "a", "b"},
		{"chaos", "--http", consoleURL, "--clear", file},
	} {
		if code, _, errs := runVerb(t, "", args...); code != exitUsage {
			t.Errorf("%q: %d %q", args, code, errs)
		}
	}
}

// Attack: a page of another site drives a victim's browser to put chaos
// rules or move the clock of a console on loopback (no authentication).
// The console's cross-site protection refuses both, and nothing changes.
func TestChaosAndClockRefuseCrossSiteRequests(t *testing.T) {
	_, consoleURL := startServe(t, "--ui", "--clock", "manual", "--chaos-api")
	for _, c := range []struct{ method, path, ctype, body string }{
		{http.MethodPut, "api/chaos", "application/json", `{"rules":[{"effect":"drop"}]}`},
		{http.MethodDelete, "api/chaos", "", ""},
		{http.MethodPost, "api/clock", "application/json", `{"advance":"1h"}`},
	} {
		req, err := http.NewRequest(c.method, consoleURL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		req.Header.Set("Origin", "http://attacker.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s /%s from another site: %d, want 403", c.method, c.path, resp.StatusCode)
		}
	}
	if code, out, _ := runVerb(t, "", "chaos", "--http", consoleURL); code != 0 || out != "no chaos rules\n" {
		t.Fatalf("rules after the attack: %q", out)
	}
	_, out, _ := runVerb(t, "", "clock", "--http", consoleURL)
	if now, err := time.Parse(time.RFC3339Nano, strings.Fields(out)[0]); err != nil || now.After(time.Now().Add(30*time.Minute)) {
		t.Fatalf("clock after the attack: %q %v", out, err)
	}
}

// Attack (review of #30, F1 and F2): a console user who may read only
// public/* under --authz-file puts chaos rules that err every client,
// reads the rules' fired counts (a side channel on keys it cannot read)
// and moves the manual clock to expire keys it cannot read. Refused (403)
// unless the policy grants the console's identity write on every key; a
// change is logged with the user. And without --chaos or --chaos-api
// there is no chaos API at all.
func TestChaosAndClockNeedWriteOnEveryKey(t *testing.T) {
	authz := filepath.Join(t.TempDir(), "authz.yaml")
	writeTestFile(t, authz, []byte(`rules:
  - principals: {usernames: [reader]}
    stateStoreResources: [{keyType: pattern, keys: ["public/*"], method: Read}]
  - principals: {usernames: [operator]}
    stateStoreResources: [{keyType: pattern, keys: ["*"], method: ReadWrite}]
`))
	call := func(consoleURL, method, path, ctype, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, consoleURL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	start := func(user string, extra ...string) (string, *servedCLI) {
		sp := backgroundServe(t, append([]string{"serve", "--listen", "127.0.0.1:0", "--ui", "--authz-file", authz, "--http-user", user, "--clock", "manual"}, extra...)...)
		var urls []string
		for range 2 {
			if !sp.lines.Scan() {
				t.Fatalf("serve printed too little; stderr:\n%s", sp.stderr)
			}
			urls = append(urls, sp.lines.Text())
		}
		go func() { _, _ = io.Copy(io.Discard, sp.out) }()
		return urls[1], sp
	}
	reader, _ := start("reader", "--chaos-api")
	for _, c := range []struct{ method, path, ctype, body string }{
		{http.MethodGet, "api/chaos", "", ""},
		{http.MethodPut, "api/chaos", "application/json", `{"rules":[{"effect":"disconnect"}]}`},
		{http.MethodDelete, "api/chaos", "", ""},
		{http.MethodPost, "api/clock", "application/json", `{"advance":"1h"}`},
	} {
		if code, body := call(reader, c.method, c.path, c.ctype, c.body); code != http.StatusForbidden || !strings.Contains(body, "write on every key") {
			t.Errorf("reader: %s /%s: %d %q, want 403", c.method, c.path, code, body)
		}
	}
	if code, _ := call(reader, http.MethodGet, "api/clock", "", ""); code != http.StatusOK {
		t.Errorf("reader: GET /api/clock: %d, want 200 (reading the clock is no change)", code)
	}
	operator, sp := start("operator", "--chaos-api")
	if code, _ := call(operator, http.MethodPut, "api/chaos", "application/json", `{"rules":[{"key":"x","effect":"drop"}]}`); code != http.StatusOK {
		t.Errorf("operator: PUT /api/chaos: %d", code)
	}
	if code, _ := call(operator, http.MethodPost, "api/clock", "application/json", `{"advance":"1s"}`); code != http.StatusOK {
		t.Errorf("operator: POST /api/clock: %d", code)
	}
	testwait.Until(t, 5*time.Second, "the changes logged with the user", func() bool {
		log := sp.stderr.String()
		return strings.Contains(log, `msg="chaos rules put over HTTP" user=operator`) && strings.Contains(log, `msg="clock moved"`) && strings.Contains(log, "user=operator remote=")
	})
	// No chaos API without --chaos or --chaos-api.
	plain, _ := start("operator")
	if code, _ := call(plain, http.MethodGet, "api/chaos", "", ""); code != http.StatusNotFound {
		t.Errorf("GET /api/chaos without --chaos: %d, want 404", code)
	}
}

// Review of #30, F6: the CI recipe wrote "$SSGEN_HTTP/api/clock" with a
// URL ending in "/": the request went to //api/clock and got a redirect
// that curl -X POST does not follow, so nothing moved. Such a path is
// served as /api/clock.
func TestConsoleServesDoubleSlashAPIPaths(t *testing.T) {
	_, consoleURL := startServe(t, "--ui", "--clock", "manual", "--chaos-api")
	if !strings.HasSuffix(consoleURL, "/") {
		t.Fatalf("console URL %q does not end in /", consoleURL)
	}
	for _, c := range []struct{ method, path, ctype, body string }{
		{http.MethodPost, "/api/clock", "application/json", `{"advance":"1s"}`},
		{http.MethodPut, "/api/chaos", "application/yaml", "rules: [{key: x, effect: drop}]"},
		{http.MethodGet, "//api/chaos", "", ""},
	} {
		req, err := http.NewRequest(c.method, consoleURL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s%s: %d, want 200", c.method, consoleURL, c.path, resp.StatusCode)
		}
	}
	if code, out, _ := runVerb(t, "", "chaos", "--http", consoleURL); code != 0 || !strings.Contains(out, `key "x"`) {
		t.Fatalf("rules after PUT //api/chaos: %q", out)
	}
}
