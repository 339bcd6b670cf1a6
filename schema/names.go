package schema

import (
	"go/token"
	"strings"
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

// exportedName turns a wire name ("updatedBy", "updated_by", "heat-pump",
// "device_id") into an exported Go name ("UpdatedBy", "HeatPump",
// "DeviceID"): each word (see words) gets its first letter upper-cased, a
// word that is a Go initialism (isInitialism) is written in capitals, and
// everything that is not an ASCII letter or digit separates words. The
// result is "" when nothing is left.
func exportedName(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		if up := strings.ToUpper(w); isInitialism(up) {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(w[1:])
	}
	return b.String()
}

// unexportedName is exportedName with its first word in lower case
// ("ThermostatID" from "thermostat", "id" gives "thermostatID";
// "HTTPServer" gives "httpServer"), for the unexported names generated
// code declares.
func unexportedName(s string) string {
	ws := words(s)
	if len(ws) == 0 {
		return ""
	}
	return strings.ToLower(ws[0]) + exportedName(strings.Join(ws[1:], "_"))
}

// words splits a name into its words: runs of ASCII letters and digits,
// cut where a lower-case letter or digit is followed by an upper-case one
// ("updatedBy") and before the last capital of a run of capitals followed
// by a lower-case letter ("HTTPServer" is "HTTP", "Server").
func words(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || !(isASCIILetter(s[i]) || isDigit(s[i])) {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		c, prev := s[i], s[i-1]
		upper := c >= 'A' && c <= 'Z'
		nextLower := i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z'
		if upper && (prev >= 'a' && prev <= 'z' || isDigit(prev) || prev >= 'A' && prev <= 'Z' && nextLower) {
			out = append(out, s[start:i])
			start = i
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isInitialism reports whether the upper-cased word is one Go writes in
// capitals in names (the list of golint and staticcheck's ST1003).
func isInitialism(w string) bool {
	switch w {
	case "ACL", "API", "ASCII", "CPU", "CSS", "DNS", "EOF", "GUID", "HTML", "HTTP", "HTTPS",
		"ID", "IP", "JSON", "LHS", "QPS", "RAM", "RHS", "RPC", "SLA", "SMTP", "SQL", "SSH",
		"TCP", "TLS", "TTL", "UDP", "UI", "UID", "UUID", "URI", "URL", "UTF8", "VM", "XML",
		"XMPP", "XSRF", "XSS":
		return true
	}
	return false
}

const exportedRule = "an exported Go identifier (an upper-case ASCII letter, then letters, digits or '_')"
