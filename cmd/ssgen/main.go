// Command ssgen generates typed Go accessors for the Azure IoT Operations
// state store from a YAML schema, serves a local state store, and talks to
// any state store from a shell. Run "ssgen help" for the verbs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// verb is one ssgen sub-command. Each lives in its own file and registers
// itself with register from an init function.
type verb struct {
	name    string
	summary string // one line for "ssgen help"
	// run executes the verb with the arguments after its name. It returns
	// an error carrying the exit code (see exitError) or nil for success.
	run func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what a verb may touch of the process, so tests can run verbs
// in-process with their own streams.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// onFlagSet, when set, sees every flag set a verb makes (completion
	// reads the verbs' flags with it).
	onFlagSet func(*flag.FlagSet)
	// broker is the URL a verb connected to ("" before it did), for the
	// hints of errors that mean no state store is there.
	broker string
}

var verbs = map[string]verb{}

func register(v verb) { verbs[v.name] = v }

// Exit codes shared by every verb.
const (
	exitOK       = 0
	exitNegative = 1 // not found, condition not met, stale or breaking (per verb)
	exitUsage    = 2 // bad usage, bad input, connection errors
)

// exitError carries a verb's exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports a usage error (exit 2).
func usageErrorf(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage to the verb's stderr.
func newFlagSet(env *cliEnv, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		if v, ok := verbs[name]; ok {
			fmt.Fprintf(env.stderr, "%s\n\n", sentence(v.summary))
		}
		fmt.Fprintf(env.stderr, "usage: ssgen %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	if env.onFlagSet != nil {
		env.onFlagSet(fs)
	}
	return fs
}

// parseFlags parses args into fs; -h/--help is success, other errors usage.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	if err != nil {
		return false, &exitError{code: exitUsage, err: err}
	}
	return false, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runCLI(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// runCLI dispatches to a verb and turns its error into an exit code.
func runCLI(ctx context.Context, env *cliEnv, args []string) int {
	switch {
	case len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" && len(args) == 1:
		printHelp(env.stdout)
		return exitOK
	case args[0] == "help":
		return helpVerb(ctx, env, args[1:])
	case args[0] == "-version" || args[0] == "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "ssgen: unknown verb %q%s (see ssgen help)\n", args[0], suggestVerb(args[0]))
		return exitUsage
	}
	err := v.run(ctx, env, args[1:])
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(env.stderr, "ssgen %s: %s\n", v.name, withBrokerHint(env, ee.err))
		}
		return ee.code
	}
	fmt.Fprintf(env.stderr, "ssgen %s: %s\n", v.name, withBrokerHint(env, err))
	return exitUsage
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "ssgen: typed Go accessors and a local server for the Azure IoT Operations state store")
	fmt.Fprintln(w, "\nusage: ssgen <verb> [flags] [args]   (ssgen <verb> --help for details)")
	fmt.Fprintln(w, "\nverbs:")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, verbs[n].summary)
	}
	fmt.Fprintln(w, "\nssgen help VERB describes a verb; ssgen --version prints the version.")
}
