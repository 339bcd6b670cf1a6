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
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ssgen/ssgen/internal/suggest"
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

// nothingToPrint is the answer of authz and persistence for a schema that
// declares nothing they could print: a negative answer (exit 1), with
// nothing written, rather than an empty rule set that would deny or
// persist nothing without a word.
func nothingToPrint(format string, a ...any) error {
	return &exitError{code: exitNegative, err: fmt.Errorf(format, a...)}
}

// exitError carries a verb's exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// subVerbError is an error of a verb's sub-verb (ssgen migrate apply):
// its one prefix names both, "ssgen migrate apply: ".
type subVerbError struct {
	name string // "migrate apply"
	err  error
}

func (e *subVerbError) Error() string { return e.err.Error() }
func (e *subVerbError) Unwrap() error { return e.err }

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
		printFlags(env.stderr, fs)
	}
	if env.onFlagSet != nil {
		env.onFlagSet(fs)
	}
	return fs
}

// parseFlags parses args into fs; -h/--help prints the usage and is
// success. Any other error is one line (the caller's exit error), not the
// flag package's message followed by the whole usage, and a misspelt flag
// gets a "did you mean".
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return true, nil
	}
	if err != nil {
		return false, &exitError{code: exitUsage, err: flagError(fs, err)}
	}
	return false, nil
}

// flagError rewrites the flag package's errors in the flags' own
// spelling ("--broker"), with a suggestion for an unknown flag.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		names := []string{"help"} // -h and --help are the flag package's own
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		hint := suggest.DidYouMean(name, names)
		if hint != "" {
			hint = strings.Replace(hint, `"`, "--", 1)
			hint = strings.Replace(hint, `"`, "", 1)
		}
		return fmt.Errorf("unknown flag --%s%s (see ssgen %s --help)", name, hint, fs.Name())
	}
	// invalid value "x" for flag -limit: parse error
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s: %s", m[2], valueProblem(fs.Lookup(m[2]), m[1], m[3]))
	}
	// "flag needs an argument: -broker"
	msg = strings.Replace(msg, "flag -", "flag --", 1)
	msg = strings.Replace(msg, "argument: -", "argument: --", 1)
	return errors.New(msg)
}

// invalidFlagValue is the flag package's error for a value its flag's Set
// refused (with "boolean" and without "flag" for a boolean flag): the
// quoted value, the flag's name and Set's error.
var invalidFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`)

// valueProblem says what is wrong with the value quoted of f: for the
// flag package's own types, what the value should be (their errors are
// only "parse error"); otherwise the flag's own error, which does not
// repeat the value.
func valueProblem(f *flag.Flag, quoted, setErr string) string {
	var v any
	if f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			v = g.Get()
		}
	}
	outOfRange := strings.Contains(setErr, "out of range")
	switch v.(type) {
	case int, int64, uint, uint64:
		if outOfRange {
			return quoted + " is out of range"
		}
		return quoted + " is not a number"
	case float64:
		return quoted + " is not a number"
	case time.Duration:
		return quoted + " is not a duration (such as 10s, 1500ms or 2m)"
	case bool:
		return quoted + " is not true or false"
	}
	return quoted + ": " + setErr
}

// printFlags lists fs's flags as flag.PrintDefaults does, but spelt as
// every doc spells them: --broker, not -broker.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		_, usage := flag.UnquoteUsage(f)
		if name := placeholder(f); name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if def := f.DefValue; !zeroFlagValue(f) {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					def = strconv.Quote(def)
				}
			}
			fmt.Fprintf(&b, " (default %s)", def)
		}
		fmt.Fprintln(w, b.String())
	})
}

// placeholder is what help prints after --NAME for f's value: the
// backquoted word of its usage (flag.UnquoteUsage), as the docs write it;
// without one, N for a number and D for a duration; "" for a boolean flag.
func placeholder(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "int", "int64", "uint", "uint64":
		return "N"
	case "duration":
		return "D"
	}
	return name
}

// zeroFlagValue reports whether f's default is its type's zero value,
// which flag.PrintDefaults leaves unsaid.
func zeroFlagValue(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	if v, ok := z.Interface().(flag.Value); ok {
		defer func() { _ = recover() }() // a Value whose String needs more than its zero value
		return f.DefValue == v.String()
	}
	return false
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
	case len(args) == 0:
		// A verb is missing: the usage, where errors go, and a failure, so
		// that a script that lost its verb does not carry on.
		printHelp(env.stderr)
		return exitUsage
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" && (len(args) == 1 || len(args) == 2 && args[1] == "help"):
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
	name := v.name
	var sv *subVerbError
	if errors.As(err, &sv) {
		name, err = sv.name, sv.err
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(env.stderr, "ssgen %s: %s\n", name, terminalSafe(withBrokerHint(env, ee.err)))
		}
		return ee.code
	}
	fmt.Fprintf(env.stderr, "ssgen %s: %s\n", name, terminalSafe(withBrokerHint(env, err)))
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
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, verbs[n].summary)
	}
	fmt.Fprintln(w, "\nssgen help VERB describes a verb; ssgen --version prints the version.")
}
