package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ssgen/ssgen/internal/policy"
)

func init() {
	register(verb{name: "persistence", summary: "print the broker's state store persistence settings for persist: true keys", run: runPersistence})
}

const persistenceUsage = `[-o FILE] [schema file, default ssgen.yaml]

Prints the state store part of the Azure IoT Operations broker's persistence
settings, as JSON in the shape of the broker configuration file of
"az iot ops create --broker-config-file": mode Custom, the keys the schema
marks persist: true (String for exact keys, Pattern with '*' for each
parameter), and dynamic persistence enabled, so that the aio-persistence
flag generated code sends for those keys is honoured as well. Merge it into
your broker configuration (persistence needs maxSize there too).`

func runPersistence(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "persistence", persistenceUsage)
	out := fs.String("o", "", "write to `FILE` instead of stdout")
	in, err := openSchema(env, fs, args, nil, nil)
	if in == nil {
		return err
	}
	file, s := in.file, in.schema
	res := policy.PersistResources(s)
	if len(res) == 0 {
		return nothingToPrint("no key of %s has persist: true, so there are no settings to print (see docs/schema.md)", file)
	}
	for _, w := range policy.AlsoPersisted(s) {
		fmt.Fprintf(env.stderr, "ssgen persistence: %s\n", w)
	}
	return writeOutput(env, *out, func(w io.Writer) error { return policy.WritePersistence(w, res) })
}
