package main

import (
	"context"
	"io"

	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "schema", summary: "print the JSON Schema of ssgen.yaml, for editors; publish or show the schema in the store", run: runSchema})
}

func runSchema(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "publish":
			return runSchemaPublish(ctx, env, args[1:])
		case "show":
			return runSchemaShow(ctx, env, args[1:])
		}
	}
	fs := newFlagSet(env, "schema", "[-o FILE]\n       ssgen schema publish [--schema FILE] [connection flags]\n       ssgen schema show [-o FILE] [--json] [connection flags]\n\nPrints the JSON Schema (draft 2020-12) of the ssgen.yaml format. Point an editor at it\nwith a first line \"# yaml-language-server: $schema="+schema.JSONSchemaURL+"\"\nor at a local copy written with -o. publish writes a schema under the reserved key\n$ssgen/schema, show prints it (ssgen schema publish --help).")
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
