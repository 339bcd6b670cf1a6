package server_test

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/server"
)

func TestLoadTLSReadsPEMFilesAndRefusesBadOnes(t *testing.T) {
	ca := testcert.NewCA(t, "CA")
	cert, key := testcert.Files(t, ca.Server(t, "server"))
	caFile := ca.CAFile(t)
	cfg, err := server.LoadTLS(cert, key, caFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil || len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("config %+v", cfg)
	}
	if cfg, err := server.LoadTLS(cert, key, ""); err != nil || cfg.ClientAuth != tls.NoClientCert {
		t.Fatalf("without a client CA: %v %v", cfg, err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string][3]string{
		"no key":          {cert, "", ""},
		"missing key":     {cert, key + ".missing", ""},
		"key as cert":     {key, key, ""},
		"missing CA":      {cert, key, caFile + ".missing"},
		"CA without cert": {cert, key, empty},
	} {
		if _, err := server.LoadTLS(files[0], files[1], files[2]); !errors.Is(err, server.ErrTLSFiles) {
			t.Errorf("%s: %v, want ErrTLSFiles", name, err)
		}
	}
}

func TestCertificateAlternativeNameMatchesAuthorizationRules(t *testing.T) {
	ca := testcert.NewCA(t, "CA")
	pol, err := server.ParsePolicy([]byte(`
rules:
  - principals: {certificateNames: ["device-9.example"]}
    stateStoreResources:
      - {keyType: string, keys: ["k"], method: ReadWrite}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{TLS: serverTLS(t, ca, ca), Authorization: pol})})
	dial := func(id string, cert tls.Certificate) *client {
		return mustConnect(t, e, id, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}}, "", "")
	}
	bySAN := dial("by-san", ca.Client(t, "unrelated-cn", "device-9.example"))
	checkResponse(t, bySAN.do("SET", "k", "v"), "+OK\r\n", true)
	other := dial("other", ca.Client(t, "device-8.example"))
	checkResponse(t, other.do("GET", "k"), "-ERR not authorized\r\n", false)
}
