package main

import (
	"context"
	"encoding/hex"

	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "del", summary: "delete a key", run: runDel})
	register(verb{name: "vdel", summary: "delete a key if it holds a given value", run: runVDel})
}

func runDel(ctx context.Context, env *cliEnv, args []string) error {
	return runDelete(ctx, env, args, false)
}

func runVDel(ctx context.Context, env *cliEnv, args []string) error {
	return runDelete(ctx, env, args, true)
}

// runDelete is del and vdel: they differ only in the value to compare.
func runDelete(ctx context.Context, env *cliEnv, args []string, byValue bool) error {
	name, usage := "del", "KEY [flags]\n\n"+
		"Deletes KEY. Prints nothing; exit 1 if the key did not exist or the\n"+
		"fencing token is stale.\n\nflags:"
	if byValue {
		name, usage = "vdel", "KEY VALUE [flags]\n\n"+
			"Deletes KEY only if it holds exactly VALUE (text, or hex with --hex). Prints\n"+
			"nothing; exit 1 if the key did not exist, holds another value, or the\n"+
			"fencing token is stale.\n\nflags:"
	}
	fs := newFlagSet(env, name, usage)
	var cf connFlags
	cf.register(fs)
	fencing := fs.String("fencing-token", "", "fencing token (an HLC) sent with the delete")
	keyHex := fs.Bool("key-hex", false, "KEY is given as hex")
	var asHex *bool
	if byValue {
		asHex = fs.Bool("hex", false, "VALUE is given as hex")
	}
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if byValue {
		err = wantArgs(fs, pos, 2, "KEY VALUE")
	} else {
		err = wantArgs(fs, pos, 1, "KEY")
	}
	if err != nil {
		return err
	}
	key, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}
	var opts runtime.DelOptions
	if opts.FencingToken, err = fencingArg(*fencing); err != nil {
		return err
	}
	var value []byte
	if byValue {
		value = []byte(pos[1])
		if *asHex {
			if value, err = hex.DecodeString(pos[1]); err != nil {
				return usageErrorf("VALUE is not hex: %v", err)
			}
		}
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	var deleted bool
	if byValue {
		deleted, _, err = c.VDel(ctx, key, value, opts)
	} else {
		deleted, _, err = c.Del(ctx, key, opts)
	}
	if err == nil && !deleted {
		err = runtime.ErrNotFound
	}
	if err != nil {
		return opError(showKey(key, *keyHex), err)
	}
	return nil
}
