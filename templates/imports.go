package templates

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// groupImports rewrites the one import block jennifer renders (every path
// in one sorted group) the way goimports groups it: the standard library
// first, then a blank line, then everything else, each group sorted.
// Standard library paths are those whose first element has no dot.
func groupImports(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if len(f.Decls) == 0 {
		return src, nil
	}
	var std, other []string
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, err
		}
		line := spec.Path.Value
		if spec.Name != nil {
			line = spec.Name.Name + " " + line
		}
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	if len(std) == 0 || len(other) == 0 {
		return src, nil // one group: nothing to separate
	}
	// jennifer renders the imports as the first declaration, one
	// parenthesised block.
	decl, ok := f.Decls[0].(*ast.GenDecl)
	if !ok || decl.Tok != token.IMPORT {
		return src, nil
	}
	start, end := fset.Position(decl.Pos()).Offset, fset.Position(decl.End()).Offset
	var b bytes.Buffer
	b.Write(src[:start])
	b.WriteString("import (\n\t")
	b.WriteString(strings.Join(std, "\n\t"))
	b.WriteString("\n\n\t")
	b.WriteString(strings.Join(other, "\n\t"))
	b.WriteString("\n)")
	b.Write(src[end:])
	return format.Source(b.Bytes())
}
