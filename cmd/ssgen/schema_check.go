package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/internal/diff"
	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "check", summary: "check that the generated files are up to date (exit 1 with a diff when stale, for CI)", run: runCheck})
}

const checkUsage = `[--schema FILE] [--out DIR] [--format text|github-actions]

Checks that the files "ssgen generate" would write with the same flags are
up to date. Exit 0 when they are; exit 1, printing a unified diff from the
files on disk to what generate would write, when one is stale, missing, or
an orphan generate would delete; exit 2 on a schema error (file:line:col
lines) or bad usage. Nothing is written. --format github-actions prints
each problem as a workflow command that annotates the pull request (the
diff follows, for the log).`

func runCheck(_ context.Context, env *cliEnv, args []string) error {
	g, help, err := parseGenFlags(env, "check", checkUsage, args, func(fs *flag.FlagSet, g *genFlags) {
		fs.StringVar(&g.format, "format", "text", "output format, `text|github-actions`")
	})
	if help || err != nil {
		return err
	}
	if g.format != "text" && g.format != formatGitHub {
		return usageErrorf("--format %q: want text or github-actions", g.format)
	}
	p, err := plan(env, g)
	if err != nil {
		return err
	}
	if len(p.changes) == 0 {
		return nil
	}
	var what []string
	for _, c := range p.changes {
		path := filepath.ToSlash(filepath.Join(p.dir, c.name))
		oldName, newName := "a/"+path, "b/"+path
		switch {
		case c.old == nil:
			oldName = "/dev/null"
			what = append(what, path+" is missing")
		case c.new == nil:
			newName = "/dev/null"
			what = append(what, path+" is an orphan")
		default:
			what = append(what, path+" is stale")
		}
		if g.format == formatGitHub {
			fmt.Fprintln(env.stdout, ghAnnotation("error", schema.Pos{Filename: path}, "ssgen check", what[len(what)-1]+"; run ssgen generate and commit the result"))
		}
		diff.Unified(env.stdout, oldName, newName, c.old, c.new)
	}
	return &exitError{code: exitNegative, err: fmt.Errorf("%s; run ssgen generate", strings.Join(what, ", "))}
}
