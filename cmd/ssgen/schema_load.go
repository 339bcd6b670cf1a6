package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ssgen/ssgen/schema"
)

// defaultSchemaFile is the schema every schema verb reads when given none.
const defaultSchemaFile = "ssgen.yaml"

// interleavedArgs parses flags placed before, between or after the
// positional arguments (`ssgen breaking ssgen.yaml --against main`), and
// returns the positional ones. A "--" ends the flags.
func interleavedArgs(fs *flag.FlagSet, args []string) (pos []string, help bool, err error) {
	for {
		if help, err = parseFlags(fs, args); help || err != nil {
			return nil, help, err
		}
		consumed := len(args) - fs.NArg()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, fs.Args()...), false, nil
		}
		if fs.NArg() == 0 {
			return pos, false, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}

// writeOutput writes to stdout, or to file when it is not empty.
func writeOutput(env *cliEnv, file string, write func(io.Writer) error) error {
	if file == "" || file == "-" {
		return write(env.stdout)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// schemaArg returns the schema file named by the positional arguments, or
// the default.
func schemaArg(fs interface{ Name() string }, pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return defaultSchemaFile, nil
	case 1:
		return pos[0], nil
	}
	return "", usageErrorf("want at most one schema file, got %d arguments (see ssgen %s --help)", len(pos), fs.Name())
}

// reportedError is a failure already printed in full to stderr: runCLI
// adds nothing, and errors.As still finds the cause.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return "" }
func (e *reportedError) Unwrap() error { return e.err }

// loadSchema loads a schema file. Schema problems are printed one per
// line as file:line:col: message, and the verb exits 2.
func loadSchema(env *cliEnv, file string) (*schema.Schema, error) {
	s, err := schema.LoadFile(file)
	return s, schemaError(env, err)
}

func schemaError(env *cliEnv, err error) error {
	var list schema.ErrorList
	switch {
	case err == nil:
		return nil
	case errors.As(err, &list):
		for _, e := range list {
			fmt.Fprintln(env.stderr, e)
		}
		return &exitError{code: exitUsage, err: &reportedError{err}}
	}
	return &exitError{code: exitUsage, err: err}
}

// schemaInput is what the opening of a verb that reads one schema yields.
type schemaInput struct {
	file   string // as named on the command line, or defaultSchemaFile
	schema *schema.Schema
}

// openSchema is the opening of the verbs that read one schema (doc, authz,
// persistence, breaking). It parses args with fs, flags placed anywhere
// around the one positional argument, the schema file; runs check, when
// not nil, on the flags; and loads the schema, its problems printed the
// way *format says (formatGitHub: as annotations; nil or anything else:
// one per line on stderr). It returns nil when the verb is done: its help
// was printed, or err says what failed.
func openSchema(env *cliEnv, fs *flag.FlagSet, args []string, format *string, check func() error) (*schemaInput, error) {
	pos, help, err := interleavedArgs(fs, args)
	if help || err != nil {
		return nil, err
	}
	file, err := schemaArg(fs, pos)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	f := "text"
	if format != nil {
		f = *format
	}
	s, err := loadSchemaFormat(env, file, f)
	if err != nil {
		return nil, err
	}
	return &schemaInput{file: file, schema: s}, nil
}
