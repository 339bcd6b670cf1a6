package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "init", summary: "write a starter ssgen.yaml", run: runInit})
}

func runInit(_ context.Context, env *cliEnv, args []string) error {
	flags := newFlagSet(env, "init", "[--package NAME] [file, default ssgen.yaml]\n\nWrites a starter schema to edit. It never overwrites a file (exit 1 if it exists).")
	pkg := flags.String("package", "", "the Go package `NAME` of the generated code (default: derived from the directory)")
	pos, help, err := interleavedArgs(flags, args)
	if help || err != nil {
		return err
	}
	file, err := schemaArg(flags, pos)
	if err != nil {
		return err
	}
	name := *pkg
	if name == "" {
		name = packageFromDir(file)
	}
	src := starterSchema(name)
	// The starter must always load; a bad --package shows up here.
	if _, err := schema.Load(file, src); err != nil {
		return usageErrorf("--package %q: want a Go package name (lower-case letters, digits, '_')", name)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return &exitError{code: exitNegative, err: fmt.Errorf("%s already exists; not overwriting it", file)}
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(src); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "wrote %s (package %s); edit it, then run ssgen generate\n", file, name)
	return nil
}

// packageFromDir derives a package name from the directory the schema is
// written to, as "go mod init" users expect; "store" when nothing usable
// is left.
func packageFromDir(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "store"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(filepath.Dir(abs))) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && b.Len() > 0 || r == '_' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" || name == "main" {
		return "store"
	}
	if _, err := schema.Load("x", starterSchema(name)); err != nil {
		return "store"
	}
	return name
}

// starterSchema is the starter file for package pkg, its package line's
// comment kept in the column of the lines below it (one space after a
// longer name).
func starterSchema(pkg string) []byte {
	const placeholder = "PACKAGE            #"
	line := pkg + strings.Repeat(" ", max(1, len(placeholder)-1-len(pkg))) + "#"
	return []byte(strings.Replace(starterTemplate, placeholder, line, 1))
}

const starterTemplate = `# yaml-language-server: $schema=` + schema.JSONSchemaURL + `
#
# The keys this application keeps in the Azure IoT Operations state store.
# Reference: https://github.com/ssgen/ssgen/blob/main/docs/schema.md
# After editing, run "ssgen generate"; review changes with "ssgen breaking".
version: 1
package: PACKAGE            # Go package of the generated code
encoding: msgpack           # default value encoding: msgpack | json | string | bytes

types:
  Mode:
    enum: [heat, cool, off]
  SetPoint:
    doc: Desired temperature, written by operators.
    fields:
      celsius: float64
      mode: Mode
      updatedBy: {type: string, optional: true}

groups:
  Thermostat:
    doc: One thermostat.
    path: thermostats/{id}  # prefix of every key below; {id} is an accessor argument
    params:
      id: string
    keys:
      SetPoint:
        path: setPoint      # full key: thermostats/{id}/setPoint
        type: SetPoint
        guard: Owner        # writes carry Owner's fencing token
      Reading:
        path: reading
        type: float64
        encoding: string
        ttl: 30s            # every Set expires after 30 s unless overridden
    locks:
      Owner:
        path: owner
        ttl: 10s
`
