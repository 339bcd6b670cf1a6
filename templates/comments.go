package templates

import (
	"go/build/constraint"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/internal/textsafe"
)

// commenter is what can take a comment line: a *jen.File at top level, a
// *jen.Group inside a const or struct block.
type commenter interface {
	Comment(string) *jen.Statement
}

// comment emits a doc comment of several paragraphs; empty paragraphs are
// skipped and the rest separated by a blank comment line.
//
// Doc text comes from the schema, so it must stay comment text whatever it
// holds. Every line is therefore handed to jennifer as a finished line
// comment ("// " and the text): jennifer writes text that begins with "//"
// or "/*" verbatim and turns text holding a newline into a /* */ block, so
// a doc line "/**/ func init() {…}" or "//go:generate …" would otherwise
// become code or a directive. Because the text always follows "// ", no
// line is a directive (those start right after "//"); commentText leaves
// no line terminator inside a line; and a line gofmt would read as a
// "// +build" constraint has its '+' escaped.
func comment(c commenter, paras ...string) {
	for _, line := range commentLines(paras...) {
		c.Comment(line)
	}
}

// commentLines renders paragraphs as complete "//" comment lines.
func commentLines(paras ...string) []string {
	var out []string
	for _, p := range paras {
		p = strings.TrimSpace(commentText(p))
		if p == "" {
			continue
		}
		if out != nil {
			out = append(out, "//")
		}
		for _, line := range wrap(p) {
			if line == "" {
				out = append(out, "//")
				continue
			}
			if constraint.IsPlusBuild("// " + line) {
				// gofmt turns a "// +build" line anywhere in a file into
				// the file's //go:build constraint.
				line = strings.Replace(line, "+", `\u002B`, 1)
			}
			out = append(out, "// "+line)
		}
	}
	return out
}

// commentText makes s safe to write after "// ": invalid UTF-8 becomes
// U+FFFD; every line terminator a scanner, editor or diff viewer may honour
// (CR, VT, FF, NEL, U+2028, U+2029) becomes '\n', where wrap breaks the
// line; and the characters that the Go scanner refuses (NUL, a BOM), other
// control characters, and the bidirectional controls that can make a
// reviewer read a line in another order (Trojan Source) are written as
// \u escapes, visible and inert.
func commentText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	for _, r := range s {
		switch {
		case textsafe.LineBreak(r):
			b.WriteByte('\n')
		case textsafe.Hidden(r):
			b.WriteString(textsafe.Escape(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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

// commentCode writes a comment of the paragraph before, then the Go
// declaration code as an indented code block, then the paragraph after.
// code is built from Go identifiers only.
func commentCode(c commenter, before, code, after string) {
	lines := commentLines(before)
	lines = append(lines, "//", "//\t"+commentText(code), "//")
	lines = append(lines, commentLines(after)...)
	for _, line := range lines {
		c.Comment(line)
	}
}
