package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "set", summary: "store a value under a key", run: runSet})
}

const setUsage = "KEY VALUE [flags]   or   ssgen set KEY --file PATH [flags]\n\n" +
	"Stores VALUE (or the contents of --file; --file - reads stdin) and prints the\n" +
	"version the service gave it. Exit 1 if --nx/--nex found the key in the way, the\n" +
	"guard lock is held by someone else, or the fencing token is stale. Put \"--\"\n" +
	"before a VALUE that starts with \"-\".\n\n" +
	"With a schema (--schema, $" + schemaEnv + " or ./" + defaultSchemaFile + "), VALUE for a declared key is\n" +
	"JSON (bare text for string-like types: set .../mode heat), checked against the\n" +
	"key's type and encoded with its encoding; a misfit is refused before anything is\n" +
	"sent. The key's declared TTL and persist apply unless --px or --persist say\n" +
	"otherwise. A guarded key is written under its guard lock's lease (taken for the\n" +
	"write and released after; --wait waits for a holder to let go) unless\n" +
	"--fencing-token is given. An undeclared key, --raw and --hex store bytes as given;\n" +
	"with a schema, a key it does not declare gets one line on stderr naming the\n" +
	"closest declaration and why the key is not it (--strict: exit 2, nothing sent).\n\nflags:"

func runSet(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "set", setUsage)
	var cf connFlags
	cf.register(fs)
	var sf schemaFlags
	sf.register(fs)
	sf.via(ctx, &cf)
	nx := fs.Bool("nx", false, "set only if the key does not exist")
	nex := fs.Bool("nex", false, "set only if the key does not exist or already holds exactly VALUE")
	var px pxFlag
	fs.Var(&px, "px", "expire the key after `D`: a Go duration (10s, 1500ms) or a number of milliseconds")
	fencing := fs.String("fencing-token", "", "fencing token, an `HLC` as printed by ssgen lock/set, sent with the write")
	persist := fs.Bool("persist", false, "ask the broker to persist the key (aio-persistence)")
	wait := fs.Duration("wait", 0, "for a guarded key: wait this long for the guard lock (0: fail at once if it is held)")
	asHex := fs.Bool("hex", false, "VALUE is given as hex bytes (implies --raw)")
	file := fs.String("file", "", "read VALUE from the file at `PATH` (- for stdin)")
	keyHex := fs.Bool("key-hex", false, "KEY is given as hex")
	strict := registerStrict(fs)
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
	if *wait < 0 {
		return usageErrorf("--wait must not be negative")
	}
	key, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}
	subject := showKey(key, *keyHex)
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

	sf.raw = sf.raw || *asHex
	res, err := sf.resolver(env)
	if err != nil {
		return err
	}
	m := resolve(res, key)
	if err := checkDeclared(env, "set", res, m, key, subject, *strict); err != nil {
		return err
	}
	switch {
	case m != nil && m.Lock != nil:
		return usageErrorf("%s is the %s: take it with ssgen lock (--raw writes it anyway)", subject, describe(m))
	case m != nil && m.Earlier:
		return usageErrorf("%s is an earlier key of %s (renamed_from): write its key %q, which deletes this one (--raw writes it anyway)", subject, describe(m), m.CurrentKey())
	case m != nil:
		input := string(value)
		if *file != "" {
			// A file or a pipe usually ends its text with a newline.
			input = strings.TrimSuffix(strings.TrimSuffix(input, "\n"), "\r")
		}
		if value, err = encodeArg(m, subject, input); err != nil {
			return err
		}
		if !px.set {
			opts.TTL = m.Key.TTL
		}
		opts.Persist = opts.Persist || m.Key.Persist
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	var earlier []string // a moved key's earlier keys: written over, as generated code does
	if m != nil {
		earlier = m.EarlierKeys()
	}
	write := func(ctx context.Context) error {
		if opts.Condition == runtime.IfNotExists {
			// A value under an earlier key is the key's (SetIfAbsent).
			if present, err := anyPresent(ctx, c, earlier); present || err != nil {
				if err == nil {
					err = runtime.ErrConditionNotMet
				}
				return opError(subject, err)
			}
		}
		ver, err := c.Set(ctx, key, value, opts)
		if err != nil {
			return opError(subject, err)
		}
		fmt.Fprintln(env.stdout, ver)
		for _, old := range earlier {
			if _, _, err := c.Del(ctx, []byte(old), runtime.DelOptions{FencingToken: opts.FencingToken}); err != nil {
				return opError(subject, fmt.Errorf("written, but its earlier key %q (renamed_from) is not deleted: %w", old, err))
			}
		}
		return nil
	}
	if m != nil && m.Key.Guard != nil && opts.FencingToken.IsZero() {
		return underGuard(ctx, env, "set", c, m, subject, *wait, cf.timeout, func(ctx context.Context, le *runtime.Lease) error {
			opts.FencingToken = le.Token()
			return write(ctx)
		})
	}
	return write(ctx)
}

// pxFlag is --px: a Go duration, or a bare number of milliseconds as in
// the protocol's own PX argument.
type pxFlag struct {
	d   time.Duration
	set bool
}

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
	p.d, p.set = d, true
	return nil
}

func parsePX(s string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms <= 0 || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return 0, errors.New("want a positive number of milliseconds")
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration like 10s or a number of milliseconds")
	}
	if d <= 0 {
		return 0, errors.New("want a positive duration")
	}
	return d, nil
}

// anyPresent reports whether any of keys holds a value.
func anyPresent(ctx context.Context, c *runtime.Client, keys []string) (bool, error) {
	for _, k := range keys {
		_, _, err := c.Get(ctx, []byte(k))
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, runtime.ErrNotFound):
			return false, err
		}
	}
	return false, nil
}
