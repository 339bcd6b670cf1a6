package main

import (
	"errors"
	"fmt"

	"github.com/ssgen/ssgen/schema"
)

// formatGitHub is the --format of check and breaking that prints GitHub
// Actions workflow commands, which annotate the pull request's files.
const formatGitHub = "github-actions"

// loadSchemaFormat loads a schema like loadSchema; with --format
// github-actions each schema problem is printed to stdout as an error
// annotation at its file, line and column (workflow commands must be on
// stdout), and the verb exits 2 all the same.
func loadSchemaFormat(env *cliEnv, file, format string) (*schema.Schema, error) {
	if format != formatGitHub {
		return loadSchema(env, file)
	}
	s, err := schema.LoadFile(file)
	var list schema.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(env.stdout, ghAnnotation("error", e.Pos, "ssgen: schema error", e.Msg))
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: %d schema error(s)", file, len(list))}
	}
	return s, schemaError(env, err)
}

// ghAnnotation formats one workflow command: level error, warning or
// notice, at pos (its line and column when known).
func ghAnnotation(level string, pos schema.Pos, title, msg string) string {
	props := "file=" + ghProperty(pos.Filename)
	if pos.Line > 0 {
		props += fmt.Sprintf(",line=%d,col=%d", pos.Line, pos.Col)
	}
	props += ",title=" + ghProperty(title)
	return "::" + level + " " + props + "::" + ghData(msg)
}
