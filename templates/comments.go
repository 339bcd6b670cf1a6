package templates

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// commenter is what can take a comment line: a *jen.File at top level, a
// *jen.Group inside a const or struct block.
type commenter interface {
	Comment(string) *jen.Statement
}

// comment emits a doc comment of several paragraphs; empty paragraphs are
// skipped and the rest separated by a blank comment line.
func comment(c commenter, paras ...string) {
	first := true
	for _, p := range paras {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !first {
			c.Comment("")
		}
		first = false
		for _, line := range wrap(p) {
			c.Comment(line)
		}
	}
}

// sentence makes doc text end like a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// wrapWidth is where long comment lines break; lines the author broke
// stay broken where they are.
const wrapWidth = 77

// wrap splits a paragraph into comment lines no longer than wrapWidth,
// breaking at spaces; a single longer word stays whole.
func wrap(p string) []string {
	var out []string
	for _, line := range strings.Split(p, "\n") {
		line = strings.TrimRight(line, " \t")
		for len(line) > wrapWidth {
			cut := strings.LastIndexByte(line[:wrapWidth+1], ' ')
			if cut <= 0 {
				break
			}
			out = append(out, line[:cut])
			line = strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return out
}
