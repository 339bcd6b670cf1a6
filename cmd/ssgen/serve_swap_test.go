package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// The data file of a running `ssgen serve --data-dir` is moved away and
// another put in its place (a restore script): the next kept write is
// answered with the persistence error (runtime.ErrPersistence), a
// memory-only write still works, the log says so once, naming the file.
// After kill -9 the write acknowledged before the swap is only in the
// write-ahead log, which belongs to the file moved aside: a restart
// refuses to start on the file put in place without it, naming the log
// segment and --repair; a repair sets the segment aside and serves the
// file put in place, with nothing acknowledged after the swap missing.
func TestServeRefusesKeptWritesOnceTheDataFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, server.StoreFile)
	restored := filepath.Join(t.TempDir(), "restored.db")
	writeDataFile(t, restored, "restored", "from the backup")

	logs := &syncBuffer{}
	child := startServeChildLogging(t, logs, "--data-dir", dir)
	cl := child.dial(t, "writer")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kept := runtime.SetOptions{Persist: true}
	if _, err := cl.Set(ctx, []byte("before"), []byte("1"), kept); err != nil {
		t.Fatal(err)
	}

	if err := os.Rename(path, filepath.Join(dir, "aside.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(restored, path); err != nil {
		t.Fatal(err)
	}

	for _, key := range []string{"after", "after-again"} {
		if _, err := cl.Set(ctx, []byte(key), []byte("2"), kept); !errors.Is(err, runtime.ErrPersistence) {
			t.Fatalf("kept SET %s after the swap: %v, want ErrPersistence", key, err)
		}
	}
	if _, err := cl.Set(ctx, []byte("memory"), []byte("3"), runtime.SetOptions{}); err != nil {
		t.Fatalf("memory-only SET after the swap: %v", err)
	}
	if _, _, err := cl.Get(ctx, []byte("after")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("GET of a refused key: %v, want ErrNotFound", err)
	}
	waitFor(t, "the error line", func() bool { return strings.Contains(logs.String(), "replaced by another file") })
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), path) {
		t.Fatalf("%d error lines, want 1 naming %s:\n%s", n, path, logs)
	}

	child.kill()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quiet})
	var damage *server.DamageError
	if !errors.As(err, &damage) || !strings.HasPrefix(filepath.Base(damage.Path), persist.LogPrefix) || !strings.Contains(err.Error(), "--repair") {
		t.Fatalf("restart on the file put in place, its log another file's: %v", err)
	}
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, Logger: quiet, Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if aside, _ := filepath.Glob(damage.Path + ".damaged-*"); len(aside) != 1 {
		t.Errorf("the log segment set aside: %q", aside)
	}
	if got := srv.Engine().Keys(); len(got) != 1 || got[0] != "restored" {
		t.Fatalf("keys after restart %q, want [restored]", got)
	}
}

// writeDataFile writes a data file at path holding one kept key.
func writeDataFile(t *testing.T, path, key, value string) {
	t.Helper()
	dir := t.TempDir()
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, PersistAll: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	res := srv.Engine().Handle(engine.Request{Args: [][]byte{[]byte("SET"), []byte(key), []byte(value)}, HasTimestamp: true, Timestamp: "1:0:c"})
	if string(res.Payload) != "+OK\r\n" {
		t.Fatalf("SET: %q", res.Payload)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, server.StoreFile), path); err != nil {
		t.Fatal(err)
	}
}
