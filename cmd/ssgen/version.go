package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func init() {
	register(verb{name: "version", summary: "print the ssgen version", run: runVersion})
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "version", "")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Fprintf(env.stdout, "ssgen %s\n", v)
	return nil
}
