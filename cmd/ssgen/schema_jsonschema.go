package main

import (
	"context"
	"io"

	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "schema", summary: "print the JSON Schema of ssgen.yaml, for editors", run: runSchema})
}

func runSchema(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "schema", "[-o FILE]\n\nPrints the JSON Schema (draft 2020-12) of the ssgen.yaml format. Point an editor at it\nwith a first line \"# yaml-language-server: $schema="+schema.JSONSchemaURL+"\"\nor at a local copy written with -o.")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	pos, help, err := interleavedArgs(fs, args)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("want no arguments, got %d (see ssgen schema --help)", len(pos))
	}
	return writeOutput(env, *out, func(w io.Writer) error {
		_, err := w.Write(schema.JSONSchema)
		return err
	})
}
