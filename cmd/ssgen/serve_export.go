package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/persist"
)

func init() {
	register(verb{name: "export", summary: "write a server's whole store to a snapshot file (JSON)", run: runExport})
}

func runExport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "export", "(--http URL | --data-dir DIR) [-o FILE] [flags]\n\n"+
		"Writes every key of a state store, with its value, version, fencing token,\n"+
		"time left to live and durability, and the store's clock, as one JSON\n"+
		"snapshot (docs/snapshots.md) to stdout or FILE. --http asks a running\n"+
		"ssgen serve --http; --data-dir reads the kept keys of a stopped server's\n"+
		"data directory (refused while a server holds it).\n\nflags:")
	var hf httpFlags
	hf.register(fs)
	dataDir := fs.String("data-dir", "", "read the data directory `DIR` of a stopped ssgen serve instead")
	out := fs.String("o", "", "write to `FILE` (replaced only once the whole snapshot is written) instead of stdout")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if (hf.addr == "") == (*dataDir == "") {
		return usageErrorf("want one of --http URL (a running server) and --data-dir DIR (a stopped one)")
	}
	write := func(w io.Writer) error { return exportHTTP(ctx, env, &hf, w) }
	if *dataDir != "" {
		write = func(w io.Writer) error { return exportDataDir(env, *dataDir, w) }
	}
	if *out == "" {
		bw := bufio.NewWriter(env.stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	return writeFileAtomically(*out, write)
}

// exportHTTP copies the snapshot a server's HTTP surface serves to w.
func exportHTTP(ctx context.Context, env *cliEnv, hf *httpFlags, w io.Writer) error {
	resp, err := hf.call(ctx, env, http.MethodGet, snapshotPath, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("reading the snapshot: %w", err)}
	}
	return nil
}

// exportDataDir writes the kept keys of a data directory, opened as
// ssgen serve opens it (checked, and refused while a server holds it),
// but from a copy: the directory itself is only read (a start would
// replay its log into the data file, upgrade an older format and drop
// expired records).
func exportDataDir(env *cliEnv, dir string, w io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, server.StoreFile)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return usageErrorf("%s holds no state store (%s)", dir, server.StoreFile)
		}
		return usageErrorf("%v", err)
	}
	tmp, err := os.MkdirTemp("", "ssgen-export-")
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer os.RemoveAll(tmp)
	// Messages about the copy's contents name the directory the user gave.
	text := func(err error) string { return strings.ReplaceAll(libText(err), tmp, filepath.Clean(dir)) }
	if err := persist.CopyForReading(dir, tmp); err != nil {
		msg := libText(err) // names the temporary directory where the copy failed
		if strings.Contains(msg, "locked by another process") {
			msg += " (to export from a running server, use --http)"
		}
		return usageErrorf("%s", msg)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(server.Options{DataDir: tmp, Logger: log})
	if err != nil {
		return usageErrorf("%s", text(err))
	}
	werr := srv.WriteSnapshot(w)
	if err := errors.Join(werr, srv.Close()); err != nil {
		return usageErrorf("%s", text(err))
	}
	return nil
}

// writeFileAtomically writes path through write into a temporary file
// beside it, renamed over path only once everything is written: a failed
// export leaves an existing file as it was.
func writeFileAtomically(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing to remove
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return &exitError{code: exitUsage, err: err}
	}
	return nil
}
