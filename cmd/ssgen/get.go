package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

func init() {
	register(verb{name: "get", summary: "print the value of a key", run: runGet})
}

func runGet(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "get", "KEY [flags]\n\n"+
		"Prints the value followed by a newline (as hex with --hex, or written\n"+
		"byte-exact to a file with --out). --version adds the key's version (an HLC)\n"+
		"as the last line of stdout. Exit 1 if the key does not exist.\n\nflags:")
	var cf connFlags
	cf.register(fs)
	asHex := fs.Bool("hex", false, "print the value as hex")
	out := fs.String("out", "", "write the value, byte-exact, to this file (- for stdout) instead")
	withVersion := fs.Bool("version", false, "print the version on its own line after the value")
	keyHex := fs.Bool("key-hex", false, "KEY is given as hex")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 1, "KEY"); err != nil {
		return err
	}
	if *asHex && *out != "" {
		return usageErrorf("--hex and --out exclude each other")
	}
	if *out == "-" && *withVersion {
		// The version line could not be told apart from a value without a newline.
		return usageErrorf("--version and --out - exclude each other")
	}
	key, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	val, ver, err := c.Get(ctx, key)
	if err != nil {
		return opError(showKey(key, *keyHex), err)
	}

	switch {
	case *out == "-":
		_, err = env.stdout.Write(val)
	case *out != "":
		err = os.WriteFile(*out, val, 0o644)
	case *asHex:
		_, err = fmt.Fprintln(env.stdout, hex.EncodeToString(val))
	default:
		err = writeLine(env.stdout, val)
	}
	if err == nil && *withVersion {
		_, err = fmt.Fprintln(env.stdout, ver)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("write value: %w", err)}
	}
	return nil
}

// writeLine writes b and a newline in one Write, so a reader sees whole
// lines.
func writeLine(w io.Writer, b []byte) error {
	line := make([]byte, 0, len(b)+1)
	line = append(append(line, b...), '\n')
	_, err := w.Write(line)
	return err
}
