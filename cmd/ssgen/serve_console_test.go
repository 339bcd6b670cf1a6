package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startServe runs serve with args in the background and returns the
// lines it prints on stdout (the MQTT URL, then the console's).
func startServe(t *testing.T, args ...string) (mqttURL, consoleURL string) {
	t.Helper()
	sp := backgroundServe(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	for _, p := range []*string{&mqttURL, &consoleURL} {
		if !sp.lines.Scan() {
			t.Fatalf("serve printed too little; stderr:\n%s", sp.stderr)
		}
		*p = sp.lines.Text()
	}
	go func() { _, _ = io.Copy(io.Discard, sp.out) }()
	return mqttURL, consoleURL
}

func TestServeUIPrintsTheConsoleURL(t *testing.T) {
	mqttURL, consoleURL := startServe(t, "--ui")
	if !strings.HasPrefix(mqttURL, "mqtt://127.0.0.1:") || !strings.HasPrefix(consoleURL, "http://127.0.0.1:") || strings.HasSuffix(consoleURL, ":0/") {
		t.Fatalf("printed %q and %q", mqttURL, consoleURL)
	}
	for _, path := range []string{"healthz", "readyz", "metrics", "api/keys", ""} {
		resp, err := http.Get(consoleURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /%s: %d", path, resp.StatusCode)
		}
	}
}

func TestServeHTTPTokenFile(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("a-token-from-a-file-1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, consoleURL := startServe(t, "--http", "127.0.0.1:0", "--http-auth", "token", "--http-token-file", tokenFile)
	if strings.Contains(consoleURL, "token=") {
		t.Fatalf("a token from a file was printed: %q", consoleURL)
	}
	req, _ := http.NewRequest("GET", consoleURL+"api/keys", nil)
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer a-token-from-a-file-1234", http.StatusOK}} {
		req.Header.Set("Authorization", c.auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
}

func TestServeHTTPUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--http", "0.0.0.0:0", "--http-auth", "none"},
		{"--http", "127.0.0.1:0", "--ui"},
		{"--http", "127.0.0.1:0", "--http-auth", "password"},
		{"--http", "127.0.0.1:0", "--http-auth", "kerberos"},
		{"--http", "nonsense"},
		{"--pprof"},
		{"--schema", "ssgen.yaml"},
		{"--raw"},
		{"--ui", "--schema", "/nonexistent/ssgen.yaml"},
		{"--http", "127.0.0.1:0", "--http-token-file", "/nonexistent/token"},
		// A random token is printed only to a terminal (issue #25): not into
		// a service's log.
		{"--http", "127.0.0.1:0", "--http-auth", "token"},
		{"--http", "0.0.0.0:0"},
	} {
		var stderr strings.Builder
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runCLI(context.Background(), env, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %s", args, code, exitUsage, stderr.String())
		}
	}
}

// TestServeHTTPServesSnapshots: ssgen export and import reach a running
// serve through the console's /api/snapshot, behind its token.
func TestServeHTTPServesSnapshots(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("snapshot-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, consoleURL := startServe(t, "--http", "127.0.0.1:0", "--http-auth", "token", "--http-token-file", tokenFile)
	snap := `{"format":"ssgen-snapshot","version":1,"keys":[{"key":"greeting","value":"hello"}]}`
	if code, out, errs := runVerb(t, snap, "import", "--http", consoleURL, "--token", "snapshot-token-0123456789", "-"); code != 0 || out != "stored 1 key, deleted 0\n" {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	if code, out, errs := runVerb(t, "", "export", "--http", consoleURL, "--token", "snapshot-token-0123456789"); code != 0 || !strings.Contains(out, `"key":"greeting"`) {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
	if code, _, errs := runVerb(t, "", "export", "--http", consoleURL); code != exitUsage || !strings.Contains(errs, "401") {
		t.Fatalf("export without the token: %d %q", code, errs)
	}
}

// The console finds its schema as the shell verbs do: --schema, else
// $SSGEN_SCHEMA, else ./ssgen.yaml; --raw ignores any.
func TestServeConsoleFindsTheSchemaLikeTheShellVerbs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, defaultSchemaFile, thermostatSchema(t))
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want bool
		log  string // what serve's log says about the console's schema
	}{
		{[]string{"--ui"}, true, `msg="console: schema" file=` + filepath.Join(dir, defaultSchemaFile) + " keys=2 locks=1"},
		{[]string{"--ui", "--raw"}, false, `msg="console: no schema (--raw)`},
	} {
		sp := backgroundServe(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		var consoleURL string
		for range 2 {
			if !sp.lines.Scan() {
				t.Fatalf("serve printed too little; stderr:\n%s", sp.stderr)
			}
			consoleURL = sp.lines.Text()
		}
		go func() { _, _ = io.Copy(io.Discard, sp.out) }()
		if s := sp.stderr.String(); !strings.Contains(s, tc.log) {
			t.Errorf("%q: the log does not say %q:\n%s", tc.args, tc.log, s)
		}
		resp, err := http.Get(consoleURL + "api/session")
		if err != nil {
			t.Fatal(err)
		}
		var session struct{ Schema bool }
		err = json.NewDecoder(resp.Body).Decode(&session)
		resp.Body.Close()
		if err != nil || session.Schema != tc.want {
			t.Errorf("%q: session says schema %t (%v), want %t", tc.args, session.Schema, err, tc.want)
		}
	}
}
