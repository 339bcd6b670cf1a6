package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	_, consoleURL := startServe(t, "--ui", "--clock", "manual")
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
