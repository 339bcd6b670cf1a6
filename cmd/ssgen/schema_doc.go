package main

import (
	"context"
	"io"

	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "doc", summary: "print a Markdown reference of the schema, for review", run: runDoc})
}

func runDoc(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "doc", "[-o FILE] [schema file, default ssgen.yaml]\n\nPrints a Markdown reference of the schema: a Mermaid diagram of the key tree\n(groups, keys, locks and which lock guards which key; GitHub renders it), every\nkey with its full path, parameters, type, encoding, TTL, guard and persistence,\nthe locks, the groups, the roles, and the types with their docs.")
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	in, err := openSchema(env, fs, args, nil, nil)
	if in == nil {
		return err
	}
	s := in.schema
	return writeOutput(env, *out, func(w io.Writer) error { return schema.WriteMarkdown(w, s) })
}
