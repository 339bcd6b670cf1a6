package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// A damaged data file stops `ssgen serve` with exit 2 and one line naming
// the file and --repair; `ssgen serve --repair` then starts, without the
// damaged key, and keeps the damaged file aside.
func TestServeRefusesADamagedDataFileAndRepairStarts(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"good", "a good value, 0123456789"}, {"bad", "a value to damage, abcdefgh"}} {
		res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte(kv[0]), []byte(kv[1])},
			HasTimestamp: true, Timestamp: "1:0:c"})
		if string(res.Payload) != "+OK\r\n" {
			t.Fatalf("SET: %q", res.Payload)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, server.StoreFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The live page and any freed copy of it (a later transaction
	// rewrote the page: the close's): damaging each damages the live one.
	n := 0
	for at := bytes.Index(data, []byte("a value to damage")); at >= 0; at = bytes.Index(data, []byte("a value to damage")) {
		for i := range 8 {
			data[at+i] ^= 0xff
		}
		n++
	}
	if n == 0 {
		t.Fatal("the value to damage is not in the file")
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runCLI(context.Background(), env, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir})
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if code != exitUsage || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "ssgen serve: ") {
		t.Fatalf("exit %d, stderr %q: want exit %d and one line", code, stderr.String(), exitUsage)
	}
	for _, want := range []string{path, `key "bad"`, "checksum", "ssgen serve --repair"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}

	// --repair: serve until the URL is out, then stop.
	_, logs, stop := serveDir(t, dir, "--repair")
	stop()
	asides, _ := filepath.Glob(path + ".damaged-*")
	if len(asides) != 1 || !strings.Contains(logs.String(), asides[0]) {
		t.Fatalf("damaged copies %q; log:\n%s", asides, logs)
	}
	srv, err = server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, ok := srv.Engine().Lookup([]byte("bad")); ok {
		t.Error("the damaged key is served after the repair")
	}
	if e, ok := srv.Engine().Lookup([]byte("good")); !ok || string(e.Value) != "a good value, 0123456789" {
		t.Errorf("good = %q, %v after the repair", e.Value, ok)
	}
}
