package server_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server"
)

// Every error the server's API returns carries the package's prefix once,
// however it was wrapped: ssgen serve prints it after its own prefix
// without it, and a Go caller reads "server: " once.
func TestErrorsCarryOnePrefix(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("rules: [1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	var errs []error
	_, err = server.LoadTLS("x", "", "")
	errs = append(errs, err)
	_, err = server.LoadTLS(file, file, "")
	errs = append(errs, err)
	_, err = server.LoadPasswords(filepath.Join(dir, "none"))
	errs = append(errs, err)
	_, err = server.LoadPasswords(bad)
	errs = append(errs, err)
	_, err = server.LoadPolicy(bad)
	errs = append(errs, err)
	_, err = server.New(server.Options{Listen: "127.0.0.1:0", DataDir: file})
	errs = append(errs, err)
	_, err = server.New(server.Options{Listen: "127.0.0.1:0", Limits: server.Limits{MaxInflight: 70000}})
	errs = append(errs, err)
	if s, err := server.New(server.Options{Broker: "mqtt://" + closed}); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, s.Start())
		_ = s.Close()
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if n := strings.Count(err.Error(), "server:"); n != 1 || !strings.HasPrefix(err.Error(), "server: ") {
			t.Errorf("case %d: %q, want one leading \"server: \"", i, err)
		}
		if strings.Contains(err.Error(), "statestore:") {
			t.Errorf("case %d: %q carries the runtime's prefix too", i, err)
		}
	}
}
