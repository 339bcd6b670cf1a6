package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// helpVerb is "ssgen help VERB": the verb's --help, on stdout.
func helpVerb(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) != 1 {
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
	if err := v.run(ctx, &help, []string{"--help"}); err != nil {
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
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD >= len(name) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
