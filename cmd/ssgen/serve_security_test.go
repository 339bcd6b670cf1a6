package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/runtime"
)

// pemPair is a certificate and key written to PEM files.
type pemPair struct{ cert, key string }

// testPKI writes a throw-away CA, a server certificate for 127.0.0.1 and
// a client certificate with common name "device-1".
func testPKI(t *testing.T) (caFile string, srv, cli pemPair) {
	t.Helper()
	ca := testcert.NewCA(t, "test CA")
	srv.cert, srv.key = testcert.Files(t, ca.Server(t, "server"))
	cli.cert, cli.key = testcert.Files(t, ca.Client(t, "device-1"))
	return ca.CAFile(t), srv, cli
}

func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

const serveAuthz = `
rules:
  - principals: {certificateNames: ["device-*"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["dev/*"], method: ReadWrite}
  - principals: {usernames: ["ops"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["*"], method: Read}
`

func TestServeWithTLSPasswordsAndAuthorization(t *testing.T) {
	dir := t.TempDir()
	caFile, srvPair, cliPair := testPKI(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	pwFile, authzFile := filepath.Join(dir, "passwd"), filepath.Join(dir, "authz.yaml")
	writeTestFile(t, pwFile, []byte("# test users\nops:"+string(hash)+"\n"))
	writeTestFile(t, authzFile, []byte(serveAuthz))

	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0",
		"--tls-cert", srvPair.cert, "--tls-key", srvPair.key, "--tls-client-ca", caFile,
		"--password-file", pwFile, "--authz-file", authzFile,
		"--max-key-bytes", "16", "--max-watches", "1")
	lines := sp.lines
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "mqtts://127.0.0.1:") {
		t.Fatalf("printed %q, want mqtts://127.0.0.1:PORT; stderr:\n%s", lines.Text(), sp.stderr)
	}
	url := lines.Text()

	dial := func(id string, edit func(*runtime.Config)) (*runtime.Client, error) {
		cfg, err := runtime.FromURL(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientID, cfg.CAFile, cfg.CertFile, cfg.KeyFile = id, caFile, cliPair.cert, cliPair.key
		cfg.Timeout = 5 * time.Second
		edit(&cfg)
		dctx, dcancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer dcancel()
		c, err := runtime.Dial(dctx, cfg)
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
		return c, err
	}
	device, err := dial("dev-client", func(*runtime.Config) {})
	if err != nil {
		t.Fatalf("dial with a client certificate: %v; stderr:\n%s", err, sp.stderr)
	}
	rctx, rcancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer rcancel()
	if _, err := device.Set(rctx, []byte("dev/a"), []byte("1"), runtime.SetOptions{}); err != nil {
		t.Fatalf("allowed SET: %v", err)
	}
	if _, err := device.Set(rctx, []byte("other"), []byte("1"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrNotAuthorized) {
		t.Fatalf("SET outside dev/*: %v, want ErrNotAuthorized", err)
	}
	if _, err := device.Set(rctx, []byte("dev/"+strings.Repeat("k", 16)), []byte("1"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("SET of a long key: %v, want ErrQuotaExceeded", err)
	}

	ops, err := dial("ops-client", func(c *runtime.Config) { c.Username, c.Password = "ops", []byte("pw") })
	if err != nil {
		t.Fatalf("dial with certificate and password: %v", err)
	}
	if v, _, err := ops.Get(rctx, []byte("dev/a")); err != nil || string(v) != "1" {
		t.Fatalf("GET as ops: %q %v", v, err)
	}
	// ops may read everything; it writes only where its certificate lets it.
	if _, err := ops.Set(rctx, []byte("other"), []byte("2"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrNotAuthorized) {
		t.Fatalf("SET as ops: %v, want ErrNotAuthorized", err)
	}

	sp.stop()
}

func TestServeRejectsBadSecurityAndLimitFlags(t *testing.T) {
	dir := t.TempDir()
	caFile, srvPair, _ := testPKI(t)
	badYAML := filepath.Join(dir, "bad.yaml")
	writeTestFile(t, badYAML, []byte("rules: [{principals: {clientIds: [a]}, stateStoreResources: [{keyType: regex, keys: [k], method: Read}]}]"))
	badPw := filepath.Join(dir, "bad-passwd")
	writeTestFile(t, badPw, []byte("alice:plaintext\n"))
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--tls-client-ca", caFile},
		{"serve", "--listen", "127.0.0.1:0", "--tls-cert", srvPair.cert},
		{"serve", "--listen", "127.0.0.1:0", "--tls-cert", srvPair.cert, "--tls-key", filepath.Join(dir, "missing.key")},
		{"serve", "--listen", "127.0.0.1:0", "--password-file", filepath.Join(dir, "missing")},
		{"serve", "--listen", "127.0.0.1:0", "--password-file", badPw},
		{"serve", "--listen", "127.0.0.1:0", "--authz-file", badYAML},
		{"serve", "--broker", "mqtt://127.0.0.1:1", "--allow-anonymous"},
		{"serve", "--broker", "mqtt://127.0.0.1:1", "--max-inflight", "10"},
		{"serve", "--listen", "127.0.0.1:0", "--max-inflight", "70000"},
		{"serve", "--listen", "127.0.0.1:0", "--max-value-bytes", "-1"},
	} {
		var stderr serveLog
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runCLI(context.Background(), env, args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, stderr.String())
		}
	}
}
