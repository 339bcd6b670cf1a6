// Package textsafe classifies the characters of untrusted text (schema
// docs, names, values) that must not reach generated code or Markdown as
// they are: the ones that end a line for some reader, and the ones a
// reader cannot see or that reorder what is shown.
package textsafe

import "fmt"

// LineBreak reports whether r ends a line for the Go scanner, an editor, a
// diff viewer or a Markdown renderer: LF, CR, VT, FF, NEL, U+2028, U+2029.
func LineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, '\u2028', '\u2029':
		return true
	}
	return false
}

// Hidden reports whether r is a character to show as an escape rather
// than as itself: a control character other than tab and the line breaks
// (NUL among them, which the Go scanner refuses), DEL, a C1 control, a
// byte order mark, or a bidirectional control, which can make a reviewer
// read a line in another order than a compiler does (Trojan Source).
func Hidden(r rune) bool {
	switch {
	case r == '\t' || LineBreak(r):
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == '\uFEFF', r == '\u061C', r == '\u200E', r == '\u200F':
		return true
	case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// Escape writes r as the visible text \uXXXX.
func Escape(r rune) string { return fmt.Sprintf(`\u%04X`, r) }
