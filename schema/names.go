package schema

import (
	"go/token"
	"strings"
	"unicode"
)

// isExported reports whether s is an exported Go identifier made of ASCII
// letters, digits and '_'. ASCII only, so generated names are typeable.
func isExported(s string) bool {
	return s != "" && s[0] >= 'A' && s[0] <= 'Z' && isIdentTail(s[1:])
}

// isParamName reports whether s can name a function parameter: an ASCII
// Go identifier that is not a keyword.
func isParamName(s string) bool {
	if s == "" || !(s[0] == '_' || isASCIILetter(s[0])) || !isIdentTail(s[1:]) {
		return false
	}
	return !token.IsKeyword(s) && s != "_"
}

// isPackageName reports whether s is a conventional Go package name.
func isPackageName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || token.IsKeyword(s) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func isIdentTail(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// exportedName turns a wire name ("updatedBy", "updated_by", "heat-pump")
// into an exported Go name ("UpdatedBy", "HeatPump"): every run of ASCII
// letters and digits becomes a word with its first letter upper-cased, and
// everything else separates words. The result is "" when nothing is left.
func exportedName(s string) string {
	var b strings.Builder
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9') {
			upper = true
			continue
		}
		if upper {
			c = byte(unicode.ToUpper(rune(c)))
			upper = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

const exportedRule = "an exported Go identifier (an upper-case ASCII letter, then letters, digits or '_')"
