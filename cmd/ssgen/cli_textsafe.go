package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/textsafe"
)

// terminalSafe is s with what a terminal would act on shown as escapes
// instead: control characters (ESC, BEL, NUL, CR...), bidirectional
// controls and invalid UTF-8 (as \xNN); tab and the line feed stay. Text
// a server or another client chose (an -ERR text, a chaos rule's name)
// goes through it before ssgen prints it.
func terminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r != '\n' && (textsafe.Hidden(r) || textsafe.LineBreak(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i])
		case r != '\n' && (textsafe.Hidden(r) || textsafe.LineBreak(r)):
			b.WriteString(textsafe.Escape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
