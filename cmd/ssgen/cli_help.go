package main

import (
	"context"
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/suggest"
)

// helpVerb is "ssgen help VERB": the verb's --help, on stdout.
func helpVerb(ctx context.Context, env *cliEnv, args []string) int {
	// A verb with verbs of its own takes one more: ssgen help migrate apply.
	if len(args) != 1 && (len(args) != 2 || args[0] != "migrate") {
		fmt.Fprintln(env.stderr, "ssgen help: want one verb (ssgen help lists them)")
		return exitUsage
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "ssgen help: unknown verb %q%s (ssgen help lists them)\n", args[0], suggestVerb(args[0]))
		return exitUsage
	}
	help := *env
	help.stderr = env.stdout
	if err := v.run(ctx, &help, append(args[1:], "--help")); err != nil {
		fmt.Fprintf(env.stderr, "ssgen help: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// sentence turns a verb's summary ("print the value of a key") into the
// sentence its help starts with ("Print the value of a key.").
func sentence(summary string) string {
	r, n := utf8.DecodeRuneInString(summary)
	return string(unicode.ToUpper(r)) + summary[n:] + "."
}

// suggestVerb returns ` (did you mean "get"?)` for a verb close to name.
func suggestVerb(name string) string {
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	return suggest.DidYouMean(name, names)
}
