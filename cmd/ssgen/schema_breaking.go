package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "breaking", summary: "report schema changes that break stored data or callers", run: runBreaking})
}

const breakingUsage = `--against FILE|GIT-REF [--format text|json|github-actions] [schema file, default ssgen.yaml]

Compares the schema with an older version of it and lists the changes that
break stored data or callers, each with a rule id (see docs/schema.md).
--against names a file, or else a git revision: the schema is then read
with "git show REV:./FILE" from the schema's directory. REV:PATH is passed
to git show as is.

Exit status: 0 when nothing breaks (warnings allowed), 1 when a change
breaks, 2 on bad usage or an invalid schema.`

func runBreaking(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "breaking", breakingUsage)
	against := fs.String("against", "", "the older schema, `BASE`: a file or a git ref (required)")
	format := fs.String("format", "text", "output format, `text|json|github-actions`")
	in, err := openSchema(env, fs, args, format, func() error {
		if *against == "" {
			return usageErrorf("--against is required (see ssgen breaking --help)")
		}
		switch *format {
		case "text", "json", "github-actions":
		default:
			return usageErrorf("--format %q: want text, json or github-actions", *format)
		}
		return nil
	})
	if in == nil {
		return err
	}
	file, newS := in.file, in.schema
	oldName, oldSrc, err := readAgainst(ctx, *against, file)
	if errors.Is(err, errNotInRevision) {
		// A schema that is new in this change cannot break anything; the
		// revision itself exists, so this is not a misspelt ref.
		fmt.Fprintf(env.stderr, "ssgen breaking: %v; nothing to compare\n", err)
		return nil
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	oldS, err := schema.Load(oldName, oldSrc)
	if err := schemaError(env, err); err != nil {
		return err
	}
	changes := schema.Compare(oldS, newS)
	if err := writeChanges(env.stdout, *format, file, changes); err != nil {
		return err
	}
	errs := 0
	for _, c := range changes {
		if c.Severity == schema.SeverityError {
			errs++
		}
	}
	if errs > 0 {
		return &exitError{code: exitNegative, err: fmt.Errorf("%d breaking change(s), %d warning(s)", errs, len(changes)-errs)}
	}
	return nil
}

// errNotInRevision reports a revision that exists but lacks the schema.
var errNotInRevision = errors.New("the schema does not exist in the revision")

// readAgainst reads the older schema from a file, or else from git. The
// returned name labels positions in it.
func readAgainst(ctx context.Context, against, schemaFile string) (string, []byte, error) {
	if st, err := os.Stat(against); err == nil && st.Mode().IsRegular() {
		src, err := os.ReadFile(against)
		return against, src, err
	}
	dir, base := filepath.Split(schemaFile)
	if dir == "" {
		dir = "."
	}
	obj := against
	if !strings.Contains(against, ":") {
		obj = against + ":./" + base
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "show", obj)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "does not exist in") || strings.Contains(msg, "exists on disk, but not in") {
			return "", nil, fmt.Errorf("%w: %s", errNotInRevision, obj)
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", nil, fmt.Errorf("--against %s: not a file, and git show %s failed: %s", against, obj, firstLine(msg))
	}
	return obj, stdout.Bytes(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func writeChanges(w io.Writer, format, schemaFile string, changes []schema.Change) error {
	switch format {
	case "json":
		if changes == nil {
			changes = []schema.Change{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(changes)
	case "github-actions":
		for _, c := range changes {
			fmt.Fprintln(w, githubAnnotation(c, schemaFile))
		}
		return nil
	}
	for _, c := range changes {
		fmt.Fprintln(w, c)
	}
	return nil
}

// githubAnnotation formats a change as a GitHub Actions workflow command,
// which the pull request shows on the schema's line. A change located in
// the older schema (something removed) is attached to the file as a whole.
func githubAnnotation(c schema.Change, schemaFile string) string {
	level := "error"
	if c.Severity == schema.SeverityWarning {
		level = "warning"
	}
	at := schema.Pos{Filename: schemaFile}
	msg := c.Msg
	if c.Pos.Filename == schemaFile && c.Pos.Line > 0 {
		at = c.Pos
	} else if c.Pos.Line > 0 {
		msg += fmt.Sprintf(" (declared at %s)", c.Pos)
	}
	return ghAnnotation(level, at, "ssgen breaking: "+c.Rule, msg)
}

func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
