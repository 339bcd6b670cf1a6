package templates

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// Options tune what Generate writes.
type Options struct {
	// Source is the schema's path as written into the "// source:" line,
	// normally relative to the output directory and slash-separated, so
	// the output does not depend on where the generator ran. It also marks
	// the files as owned by that schema (see Owns).
	Source string
}

// File is one generated Go source file.
type File struct {
	Name    string // base name, e.g. "thermostat_ssgen.go"
	Content []byte // gofmt'd source, imports grouped as goimports does
}

// FileName is the name of the file generated for a schema of package pkg.
// Naming it after the package, not the schema file, makes a package rename
// leave an orphan that the generator recognises and removes.
func FileName(pkg string) string { return pkg + "_ssgen.go" }

// Generate renders the Go source for s, a schema that schema.Load
// accepted (which refuses names the generated code reserves).
func Generate(s *schema.Schema, opts Options) ([]File, error) {
	// The source path is written into a comment line of the header, which
	// go/build reads for build constraints and Source for ownership: a
	// path that would break that line is refused rather than rewritten.
	if strings.ContainsRune(opts.Source, '\n') || commentText(opts.Source) != opts.Source {
		return nil, fmt.Errorf("templates: source %q holds a line break or a control character", opts.Source)
	}
	shadow := fileNames(s)
	f := jen.NewFile(s.Package)
	f.ImportName(runtimePkg, "runtime")
	f.ImportName(codecPkg, "codec")
	f.ImportName(msgpackPkg, "msgpack")
	f.ImportName(migratePkg, "migrate")
	emitHeader(f, s, opts)
	emitVersionGuard(f, s)
	emitEvolution(f, s)
	for _, t := range s.Types {
		switch t.Kind {
		case schema.KindStruct:
			emitStruct(f, t)
			emitVersions(f, t)
			emitTransitions(f, t)
		case schema.KindEnum:
			emitEnum(f, t)
		}
	}
	emitStore(f, s)
	for _, k := range s.Keys {
		emitKey(f, storeRecv(shadow), k)
	}
	for _, l := range s.Locks {
		emitLock(f, storeRecv(shadow), l)
	}
	for _, g := range s.Groups {
		emitGroup(f, g, shadow)
		for _, k := range g.Keys {
			emitKey(f, groupRecv(g, shadow), k)
		}
		for _, l := range g.Locks {
			emitLock(f, groupRecv(g, shadow), l)
		}
		emitGroupLister(f, g)
		emitGroupGetters(f, g)
	}
	emitParamCheck(f, s)
	emitMigrations(f, s)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("templates: render %s: %w", s.Package, err)
	}
	out, err := groupImports(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("templates: group imports of %s: %w", s.Package, err)
	}
	return []File{{Name: FileName(s.Package), Content: out}}, nil
}
