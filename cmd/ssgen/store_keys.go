package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ssgen/ssgen/internal/schemaval"
)

func init() {
	register(verb{name: "keys", summary: "list the keys that match a glob (SCAN)", run: runKeys})
}

func runKeys(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "keys", "[GLOB] [flags]\n\n"+
		"Lists the keys matching GLOB (default *), one per line, in the service's\n"+
		"order: '*' any run of bytes ('/' included), '?' one byte, [abc] [a-z] [!a]\n"+
		"a set, '\\' makes the next byte literal. With --limit the listing stops\n"+
		"after N keys and prints the cursor to resume from on stderr; --cursor\n"+
		"resumes right after the last key listed.\n\n"+
		"With a schema (--schema, $"+schemaEnv+" or ./"+defaultSchemaFile+"), a declared key is followed\n"+
		"by its declaration's name (KEY Thermostat.SetPoint); with --json, by the\n"+
		"declaration and its parameter values.\n\nflags:")
	var cf connFlags
	cf.register(fs)
	var sf schemaFlags
	sf.register(fs)
	sf.via(ctx, &cf)
	fs.Lookup("raw").Usage = "ignore any schema: keys are listed without their declarations" // keys prints no values
	asJSON := fs.Bool("json", false, `print JSON lines: {"key":K} ({"keyHex":H} for a key that is not UTF-8; "schema" for a declared key), then {"cursor":C} if --limit stopped the listing`)
	asHex := fs.Bool("key-hex", false, "print keys as hex")
	limit := fs.Int("limit", 0, "stop after this many keys (0: all)")
	from := fs.String("cursor", "", "resume a listing of the same GLOB from cursor `C` (printed after --limit)")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErrorf("want at most one GLOB, got %d arguments (see ssgen keys --help)", len(pos))
	}
	pattern := "*"
	if len(pos) == 1 {
		pattern = pos[0]
	}
	if pattern == "" {
		return usageErrorf("empty GLOB")
	}
	if *limit < 0 {
		return usageErrorf("--limit must not be negative, got %d", *limit)
	}

	res, err := sf.resolver(env)
	if err != nil {
		return err
	}

	var at keysCursor
	if *from != "" {
		if at, err = parseKeysCursor(*from, pattern); err != nil {
			return err
		}
	}

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	out := bufio.NewWriter(env.stdout)
	defer out.Flush()
	listed := 0
	next, err := listKeys(ctx, c, pattern, at, *limit, func(key []byte) error {
		listed++
		return writeKey(out, key, resolve(res, key), *asJSON, *asHex)
	})
	if err != nil {
		out.Flush()
		var we *writeError
		if errors.As(err, &we) {
			return &exitError{code: exitUsage, err: fmt.Errorf("write: %w", we.err)}
		}
		if listed == 0 || next == nil {
			// Nothing listed yet: resuming is running the command again.
			return &exitError{code: exitUsage, err: fmt.Errorf("%q: %w", pattern, libErr(err))}
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("%q: %w (resume with --cursor %q)", pattern, libErr(err), next.String(pattern))}
	}
	if next == nil {
		return nil
	}
	if *asJSON {
		line, _ := json.Marshal(map[string]string{"cursor": next.String(pattern)})
		_, err = fmt.Fprintf(out, "%s\n", line)
	} else {
		err = out.Flush()
		fmt.Fprintf(env.stderr, "more keys: resume with --cursor %q\n", next.String(pattern))
	}
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("write: %w", err)}
	}
	return nil
}

// writeError is a failure to print a key, told apart from a failure to
// list one.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// writeKey prints one listed key: as text (Go-quoted when it is not plain,
// as watch does) followed by its declaration's name if it has one, as
// hex, or as a JSON line.
func writeKey(w *bufio.Writer, key []byte, m *schemaval.Match, asJSON, asHex bool) error {
	var err error
	switch {
	case asJSON:
		err = writeJSONLine(w, newRecord(key, asHex, m))
	case m != nil:
		_, err = fmt.Fprintln(w, token(key, asHex), m.Name())
	default:
		_, err = fmt.Fprintln(w, token(key, asHex))
	}
	return err
}
