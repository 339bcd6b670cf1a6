package main

import (
	"context"
	"encoding/hex"
	"errors"

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
	const typed = "With a schema (--schema, $" + schemaEnv + " or ./" + defaultSchemaFile + "), a key it does not declare gets\n" +
		"one warning line naming the closest declaration (--strict: exit 2, nothing sent),\n" +
		"and a guarded key is deleted under its guard lock's lease (taken and released;\n" +
		"--wait waits for a holder) unless --fencing-token is given"
	name, usage := "del", "KEY [flags]\n\n"+
		"Deletes KEY. Prints nothing; exit 1 if the key did not exist, the guard lock is\n"+
		"held by someone else, or the fencing token is stale.\n\n"+typed+".\n\nflags:"
	if byValue {
		name, usage = "vdel", "KEY VALUE [flags]\n\n"+
			"Deletes KEY only if it holds exactly VALUE (text, or hex with --hex). Prints\n"+
			"nothing; exit 1 if the key did not exist, holds another value, the guard lock\n"+
			"is held by someone else, or the fencing token is stale.\n\n"+typed+", and\n"+
			"VALUE of a declared key is typed as for ssgen set and encoded with its encoding.\n\nflags:"
	}
	fs := newFlagSet(env, name, usage)
	var cf connFlags
	cf.register(fs)
	var sf schemaFlags
	sf.register(fs)
	sf.via(ctx, &cf)
	fencing := fs.String("fencing-token", "", "fencing token, an `HLC`, sent with the delete")
	wait := fs.Duration("wait", 0, "for a guarded key: wait this long for the guard lock (0: fail at once if it is held)")
	keyHex := fs.Bool("key-hex", false, "KEY is given as hex")
	strict := registerStrict(fs)
	var asHex *bool
	if byValue {
		asHex = fs.Bool("hex", false, "VALUE is given as hex bytes (implies --raw)")
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
	if *wait < 0 {
		return usageErrorf("--wait must not be negative")
	}
	subject := showKey(key, *keyHex)
	var value []byte
	if byValue {
		value = []byte(pos[1])
		if *asHex {
			if value, err = hex.DecodeString(pos[1]); err != nil {
				return usageErrorf("VALUE is not hex: %v", err)
			}
		}
	}
	sf.raw = sf.raw || asHex != nil && *asHex
	res, err := sf.resolver(env)
	if err != nil {
		return err
	}
	m := resolve(res, key)
	if err := checkDeclared(env, name, res, m, key, subject, *strict); err != nil {
		return err
	}
	if m != nil && m.Lock != nil {
		return usageErrorf("%s is the %s: ssgen lock releases it (--raw deletes it anyway)", subject, describe(m))
	}
	if m != nil && byValue {
		if value, err = encodeArg(m, subject, pos[1]); err != nil {
			return err
		}
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	keys := [][]byte{key}
	if m != nil {
		// A moved key is deleted under its earlier keys too, as generated
		// code's Delete and DeleteIfEqual do: else the earlier value
		// would read as the key's again.
		for _, old := range m.EarlierKeys() {
			keys = append(keys, []byte(old))
		}
	}
	del := func(ctx context.Context) error {
		var deleted bool
		var unmet error // VDEL of a key holding another value
		for _, k := range keys {
			var ok bool
			var err error
			if byValue {
				ok, _, err = c.VDel(ctx, k, value, opts)
				if errors.Is(err, runtime.ErrConditionNotMet) {
					ok, unmet, err = false, err, nil
				}
			} else {
				ok, _, err = c.Del(ctx, k, opts)
			}
			if err != nil {
				return opError(showKey(k, *keyHex), err)
			}
			deleted = deleted || ok
		}
		switch {
		case !deleted && unmet != nil:
			return opError(subject, unmet)
		case !deleted:
			return opError(subject, runtime.ErrNotFound)
		}
		return nil
	}
	if m != nil && m.Key.Guard != nil && opts.FencingToken.IsZero() {
		return underGuard(ctx, env, name, c, m, subject, *wait, cf.timeout, func(ctx context.Context, le *runtime.Lease) error {
			opts.FencingToken = le.Token()
			return del(ctx)
		})
	}
	return del(ctx)
}
