// Package logtext is how bytes a client controls (keys, patterns, verbs,
// client ids, stamps) appear in the server's log lines: as text when they
// are text, else base64, and never longer than a bound.
package logtext

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/ssgen/ssgen/server/engine"
)

// Bytes shows a key, pattern or verb in a log line: as text when it is
// text (the handler quotes what needs quoting), else "base64:…"; longer
// than max bytes, cut there with its length.
func Bytes(b []byte, max int) string {
	n := len(b)
	if n > max {
		b = cut(b, max)
	}
	s := string(b)
	if !engine.IsText(b) {
		s = "base64:" + base64.StdEncoding.EncodeToString(b)
	}
	if n > max {
		s += "…(" + strconv.Itoa(n) + " bytes)"
	}
	return s
}

// cut is b[:max], shortened by up to three bytes when that keeps text
// from ending in part of a character.
func cut(b []byte, max int) []byte {
	for i := 0; i < utf8.UTFMax && i <= max; i++ {
		if utf8.Valid(b[:max-i]) {
			return b[:max-i]
		}
	}
	return b[:max]
}

// Clip bounds a client-controlled string for a log line, as Bytes does;
// an empty one is "(none)".
func Clip(s string, max int) string {
	if s == "" {
		return "(none)"
	}
	return Bytes([]byte(s), max)
}
