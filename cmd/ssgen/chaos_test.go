package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
