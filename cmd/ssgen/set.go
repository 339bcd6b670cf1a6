package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "set", summary: "store a value under a key", run: runSet})
}

func runSet(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "set", "KEY VALUE [flags]   or   ssgen set KEY --file PATH [flags]\n\n"+
		"Stores VALUE (text, or hex with --hex, or the bytes of a file with --file;\n"+
		"--file - reads stdin) and prints the version the service gave it. Exit 1 if\n"+
		"--nx/--nex found the key in the way or the fencing token is stale. Put \"--\"\n"+
		"before a VALUE that starts with \"-\".\n\nflags:")
	var cf connFlags
	cf.register(fs)
	nx := fs.Bool("nx", false, "set only if the key does not exist")
	nex := fs.Bool("nex", false, "set only if the key does not exist or already holds exactly VALUE")
	var px pxFlag
	fs.Var(&px, "px", "expire the key after this long: a Go duration (10s, 1500ms) or a number of milliseconds")
	fencing := fs.String("fencing-token", "", "fencing token (an HLC, as printed by ssgen lock/set) sent with the write")
	persist := fs.Bool("persist", false, "ask the broker to persist the key (aio-persistence)")
	asHex := fs.Bool("hex", false, "VALUE is given as hex")
	file := fs.String("file", "", "read the value from this file (- for stdin) instead of VALUE")
	keyHex := fs.Bool("key-hex", false, "KEY is given as hex")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if *file != "" {
		if *asHex {
			return usageErrorf("--hex and --file exclude each other")
		}
		err = wantArgs(fs, pos, 1, "KEY (the value comes from --file)")
	} else {
		err = wantArgs(fs, pos, 2, "KEY VALUE")
	}
	if err != nil {
		return err
	}
	if *nx && *nex {
		return usageErrorf("--nx and --nex exclude each other")
	}
	key, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}
	opts := runtime.SetOptions{TTL: px.d, Persist: *persist}
	switch {
	case *nx:
		opts.Condition = runtime.IfNotExists
	case *nex:
		opts.Condition = runtime.IfNotExistsOrEqual
	}
	if opts.FencingToken, err = fencingArg(*fencing); err != nil {
		return err
	}
	var value []byte
	switch {
	case *file == "-":
		value, err = io.ReadAll(env.stdin)
	case *file != "":
		value, err = os.ReadFile(*file)
	case *asHex:
		if value, err = hex.DecodeString(pos[1]); err != nil {
			return usageErrorf("VALUE is not hex: %v", err)
		}
	default:
		value = []byte(pos[1])
	}
	if err != nil {
		return usageErrorf("read value: %v", err)
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	ver, err := c.Set(ctx, key, value, opts)
	if err != nil {
		return opError(showKey(key, *keyHex), err)
	}
	fmt.Fprintln(env.stdout, ver)
	return nil
}

// pxFlag is --px: a Go duration, or a bare number of milliseconds as in
// the protocol's own PX argument.
type pxFlag struct{ d time.Duration }

func (p *pxFlag) String() string {
	if p == nil || p.d == 0 {
		return ""
	}
	return p.d.String()
}

func (p *pxFlag) Set(s string) error {
	d, err := parsePX(s)
	if err != nil {
		return err
	}
	p.d = d
	return nil
}

func parsePX(s string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms <= 0 || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return 0, fmt.Errorf("%q: want a positive number of milliseconds", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration like 10s or a number of milliseconds", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration", s)
	}
	return d, nil
}
