package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/ssgen/ssgen/server/engine"
)

func init() {
	register(verb{name: "import", summary: "load a snapshot file into a running server", run: runImport})
}

func runImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "import", "--http URL [--merge | --replace] FILE [flags]\n\n"+
		"Loads a snapshot (ssgen export; docs/snapshots.md) into a running ssgen serve\n"+
		"--http, all or nothing: a snapshot with any problem is refused, naming it,\n"+
		"and the store is left as it was. FILE - reads stdin. By default the store\n"+
		"must be empty; --merge writes the snapshot's keys over the store's, keeping\n"+
		"the others; --replace also deletes the keys the snapshot lacks. Prints what\n"+
		"was stored and deleted.\n\nflags:")
	var hf httpFlags
	hf.register(fs)
	merge := fs.Bool("merge", false, "load into a store with keys: replace those of the same name, keep the others")
	replace := fs.Bool("replace", false, "make the store exactly the snapshot: delete the keys it does not hold")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("want one snapshot FILE (- for stdin), got %d arguments", len(pos))
	}
	if err := hf.required(" (to start a server from a snapshot, use ssgen serve --seed FILE)"); err != nil {
		return err
	}
	if *merge && *replace {
		return usageErrorf("--merge and --replace exclude each other")
	}
	mode := engine.ImportEmpty
	if *merge {
		mode = engine.ImportMerge
	} else if *replace {
		mode = engine.ImportReplace
	}
	var body io.Reader = env.stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return usageErrorf("%v", err)
		}
		defer f.Close()
		body = f
	}
	resp, err := hf.call(ctx, env, http.MethodPost, snapshotPath+"?mode="+mode.String(), "application/json", bufio.NewReader(body))
	var refused *httpStatusError
	if errors.As(err, &refused) {
		code, msg := exitUsage, refused.msg
		if refused.status == http.StatusConflict {
			code = exitNegative // the store holds keys: the condition of the default mode
			// The server's text names its HTTP parameter (mode merge).
			msg = fmt.Sprintf("%d %s: the store is not empty: --merge loads the snapshot over its keys, --replace makes it exactly the snapshot",
				refused.status, http.StatusText(refused.status))
		}
		return &exitError{code: code, err: fmt.Errorf("%s: %s", pos[0], msg)}
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res struct {
		Stored  int `json:"stored"`
		Deleted int `json:"deleted"`
	}
	if err := decodeAnswer(resp.Body, 4096, &res); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "stored %s, deleted %d\n", plural(res.Stored, "key"), res.Deleted)
	return nil
}
