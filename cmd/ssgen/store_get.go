package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "get", summary: "print the value of a key", run: runGet})
}

const getUsage = "KEY [flags]\n\n" +
	"Prints the value of KEY followed by a newline. Exit 1 if the key does not exist.\n\n" +
	"With a schema (--schema, $" + schemaEnv + " or ./" + defaultSchemaFile + "), a declared key's value is\n" +
	"decoded with its type and encoding: a scalar prints as text, anything else as\n" +
	"indented JSON, and one line on stderr names the declaration, its parameters, the\n" +
	"version and when the key expires if written with its declared TTL. --json prints\n" +
	"all of it as one JSON object instead. An undeclared key, --raw, --hex and --out\n" +
	"print the bytes. --version adds the key's version (an HLC) as the last line.\n\nflags:"

func runGet(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "get", getUsage)
	var cf connFlags
	cf.register(fs)
	var sf schemaFlags
	sf.register(fs)
	sf.via(ctx, &cf)
	asHex := fs.Bool("hex", false, "print the value's bytes as hex")
	out := fs.String("out", "", "write the value's bytes, byte-exact, to `FILE` (- for stdout) instead")
	withVersion := fs.Bool("version", false, "print the version on its own line after the value")
	asJSON := fs.Bool("json", false, `print one JSON object: key, value (or valueHex), version, written; for a declared key also schema, ttl and expires`)
	quiet := fs.Bool("quiet", false, "print no summary line on stderr")
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
	if *asJSON && (*asHex || *out != "" || *withVersion) {
		return usageErrorf("--json excludes --hex, --out and --version (it prints the version)")
	}
	if *out == "-" && *withVersion {
		// The version line could not be told apart from a value without a newline.
		return usageErrorf("--version and --out - exclude each other")
	}
	key, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}
	// Bytes asked for are bytes: no schema.
	sf.raw = sf.raw || *asHex || *out != ""
	res, err := sf.resolver(env)
	if err != nil {
		return err
	}
	m := resolve(res, key)

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	val, ver, err := c.Get(ctx, key)
	var readFrom string
	for _, old := range earlierKeys(m) {
		if !errors.Is(err, runtime.ErrNotFound) {
			break
		}
		// A key that moved reads its earlier names, in order, while it
		// is absent, as generated code does.
		if val, ver, err = c.Get(ctx, []byte(old)); err == nil {
			readFrom = old
		}
	}
	if err != nil {
		return opError(showKey(key, *keyHex), err)
	}
	d := decodeValue(m, val)
	if d.err != nil && !*asJSON {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: stored value does not fit %s: %v (--raw prints its bytes)", showKey(key, *keyHex), describe(m), d.err)}
	}

	switch {
	case *asJSON:
		rec := newRecord(key, *keyHex, m)
		rec.setValue(d)
		rec.setVersion(m, ver)
		rec.ReadFrom = readFrom
		err = writeJSONLine(env.stdout, rec)
	case *out == "-":
		_, err = env.stdout.Write(val)
	case *out != "":
		err = os.WriteFile(*out, val, 0o644)
	case *asHex:
		_, err = fmt.Fprintln(env.stdout, hex.EncodeToString(val))
	default:
		err = writeLine(env.stdout, d.text())
	}
	if err == nil && *withVersion {
		_, err = fmt.Fprintln(env.stdout, ver)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("write value: %w", err)}
	}
	if m != nil && !*asJSON && !*quiet {
		fmt.Fprintln(env.stderr, facts(m, ver, time.Now()))
		if readFrom != "" {
			fmt.Fprintf(env.stderr, "read from its earlier key %q (renamed_from): the key itself is absent\n", readFrom)
		}
	}
	return nil
}

// earlierKeys are the earlier names of the declared key m, if any.
func earlierKeys(m *schemaval.Match) []string {
	if m == nil {
		return nil
	}
	return m.EarlierKeys()
}

// writeLine writes b and a newline in one Write, so a reader sees whole
// lines.
func writeLine(w io.Writer, b []byte) error {
	line := make([]byte, 0, len(b)+1)
	line = append(append(line, b...), '\n')
	_, err := w.Write(line)
	return err
}
