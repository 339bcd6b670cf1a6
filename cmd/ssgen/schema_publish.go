package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/schema"
)

// schemaFromStore is the --schema value that names the schema published
// in the store instead of a file (a file named "store" is ./store).
const schemaFromStore = "store"

const publishUsage = `[--schema FILE] [connection flags]

Writes the schema file (default: $` + schemaEnv + `, else ./` + defaultSchemaFile + `) under the
reserved key ` + schemastore.Key + `, so that the shell verbs and the console can read keys
through it with --schema store and no local file. The value is a JSON envelope:
{"format":1,"digest":SHA256 HEX,"name":FILE NAME,"published":RFC 3339,"schema":TEXT}.
The schema must load (its problems are printed as file:line:col lines, exit 2, nothing
sent) and be at most 1 MiB of UTF-8 text. When the same schema (same digest) is already
published, nothing is written.

flags:`

const showUsage = `[-o FILE] [--json] [connection flags]

Prints the schema published under ` + schemastore.Key + ` (ssgen schema publish): two comment
lines naming its file, digest and publication time, then its YAML, with what a terminal
would act on escaped. -o writes the schema's bytes exactly to FILE instead (the summary
goes to stderr); --json prints the envelope's fields but the schema, plus the counts of
keys and locks. The value is checked as --schema store checks it: exit 2 when it is not a
published schema or does not load, exit 1 when nothing is published.

flags:`

func runSchemaPublish(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "schema publish", publishUsage)
	var cf connFlags
	cf.register(fs)
	file := fs.String("schema", "", "the schema `FILE` to publish")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("want no arguments, got %d: name the file with --schema (see ssgen schema publish --help)", len(pos))
	}
	if e := env.getenv(schemaEnv); *file == "" && e != schemaFromStore {
		// $SSGEN_SCHEMA=store is for the verbs that read keys.
		*file = e
	}
	if *file == "" {
		*file = defaultSchemaFile
	}
	if *file == schemaFromStore {
		return usageErrorf("--schema store: publish reads a schema file (./store is a file named store)")
	}
	src, err := readBounded(*file, schemastore.MaxSchemaBytes)
	if err != nil {
		return err
	}
	// The schema's problems, file:line:col, as ssgen check prints them.
	s, err := schema.Load(*file, src)
	if err := schemaError(env, err); err != nil {
		return err
	}
	value, err := schemastore.Encode(*file, src, time.Now())
	if err != nil {
		return usageErrorf("%s: %v (nothing was sent)", *file, err)
	}
	digest := schemastore.Digest(src)

	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	key := []byte(schemastore.Key)
	if old, _, err := c.Get(ctx, key); err == nil {
		if p, err := schemastore.Decode(old); err == nil && p.Digest == digest {
			fmt.Fprintf(env.stdout, "%s already holds %s (sha256 %s, published %s): nothing written\n",
				schemastore.Key, *file, digest, p.Time.UTC().Format(time.RFC3339))
			return nil
		}
	} else if !errors.Is(err, runtime.ErrNotFound) {
		return opError(schemastore.Key, err)
	}
	ver, err := c.Set(ctx, key, value, runtime.SetOptions{Persist: true})
	if err != nil {
		return opError(schemastore.Key, err)
	}
	fmt.Fprintf(env.stdout, "published %s (sha256 %s, %d bytes, %d keys, %d locks) under %s, version %s\n",
		*file, digest, len(src), len(s.AllKeys()), len(s.AllLocks()), schemastore.Key, ver)
	return nil
}

// readBounded reads file, refusing one of more than max bytes before
// reading it all.
func readBounded(file string, max int) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if len(b) > max {
		return nil, usageErrorf("%s is more than %d bytes, the most a published schema may be (nothing was sent)", file, max)
	}
	return b, nil
}

func runSchemaShow(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "schema show", showUsage)
	var cf connFlags
	cf.register(fs)
	out := fs.String("o", "", "write the schema's bytes, exactly, to `FILE`")
	asJSON := fs.Bool("json", false, "print the envelope's fields (but the schema) and the counts as one JSON object")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("want no arguments, got %d (see ssgen schema show --help)", len(pos))
	}
	if *out != "" && *asJSON {
		return usageErrorf("-o and --json exclude each other")
	}
	p, err := fetchPublished(ctx, env, &cf, exitNegative)
	if err != nil {
		return err
	}
	summary := fmt.Sprintf("%s: %q, sha256 %s, published %s, %d keys, %d locks", schemastore.Key, p.Name, p.Digest,
		p.Time.UTC().Format(time.RFC3339), len(p.Schema.AllKeys()), len(p.Schema.AllLocks()))
	switch {
	case *asJSON:
		return writeJSONLine(env.stdout, map[string]any{
			"key": schemastore.Key, "format": p.Format, "name": p.Name, "digest": p.Digest,
			"published": p.Time.UTC().Format(time.RFC3339), "bytes": len(p.Bytes),
			"keys": len(p.Schema.AllKeys()), "locks": len(p.Schema.AllLocks()),
		})
	case *out != "" && *out != "-":
		if err := os.WriteFile(*out, p.Bytes, 0o644); err != nil {
			return usageErrorf("%v", err)
		}
		fmt.Fprintln(env.stderr, summary)
		return nil
	case *out == "-":
		_, err := env.stdout.Write(p.Bytes)
		fmt.Fprintln(env.stderr, summary)
		return err
	}
	text := terminalSafe(string(p.Bytes))
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = fmt.Fprintf(env.stdout, "# %s\n# (ssgen schema show -o FILE writes the schema's exact bytes)\n%s", summary, text)
	return err
}

// loadPublished reads the schema published on cf's broker for --schema
// store: a missing one is a failure (exit 2), as a missing file is.
func loadPublished(ctx context.Context, env *cliEnv, cf *connFlags) (*schemastore.Published, error) {
	return fetchPublished(ctx, env, cf, exitUsage)
}

// fetchPublished reads and checks the value under schemastore.Key. Its
// problems are printed one per line, naming the key; none is exit code
// missing.
func fetchPublished(ctx context.Context, env *cliEnv, cf *connFlags, missing int) (*schemastore.Published, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := cf.dial(ctx, env, true)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	val, _, err := c.Get(ctx, []byte(schemastore.Key))
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return nil, &exitError{code: missing, err: fmt.Errorf("no schema is published under %s on %s (ssgen schema publish writes one)", schemastore.Key, env.broker)}
	case err != nil:
		return nil, opError(schemastore.Key, err)
	}
	p, err := schemastore.Decode(val)
	var list schema.ErrorList
	switch {
	case err == nil:
		return p, nil
	case errors.As(err, &list):
		// The positions name the key; the messages quote text any writer
		// of the key chose, so they are escaped as any such text.
		for _, e := range list {
			fmt.Fprintln(env.stderr, terminalSafe(e.Error()))
		}
		return nil, &exitError{code: exitUsage, err: &reportedError{err}}
	}
	return nil, &exitError{code: exitUsage, err: err}
}
