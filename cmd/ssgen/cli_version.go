package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

func init() {
	register(verb{name: "version", summary: "print the ssgen version", run: runVersion})
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "version", "\n\nPrints \"ssgen VERSION (GO)\": the module version Go recorded in the binary\n"+
		"(v1.2.3 from go install ...@v1.2.3, a pseudo-version for a build in a git checkout,\n"+
		"or (devel) when it recorded none, as with go run), then the Go version.\n"+
		"ssgen --version prints the same.")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("want no arguments, got %d (see ssgen version --help)", fs.NArg())
	}
	fmt.Fprintln(env.stdout, versionLine())
	return nil
}

// versionLine is "ssgen VERSION [COMMIT[+dirty]] (GO)" from the build
// information the Go toolchain records.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "ssgen (unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	parts := []string{"ssgen", v}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	// A version from a tag or a pseudo-version names its commit itself.
	if rev != "" && v == "(devel)" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		parts = append(parts, rev)
	}
	return strings.Join(parts, " ") + " (" + bi.GoVersion + ")"
}
