package templates

import (
	"bufio"
	"bytes"
	"strings"
)

// Source returns the schema path named by a generated file's "// source:"
// line, and whether content is a file ssgen generated at all (its first
// line is GeneratedHeader). Only the comment block before the package
// clause is read.
func Source(content []byte) (source string, generated bool) {
	sc := bufio.NewScanner(bytes.NewReader(content))
	first := true
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if first {
			if line != GeneratedHeader {
				return "", false
			}
			first = false
			continue
		}
		if src, ok := strings.CutPrefix(line, sourcePrefix); ok {
			return src, true
		}
		if !strings.HasPrefix(line, "//") {
			break
		}
	}
	return "", !first
}

// Owns reports whether content is a file generated from the schema named
// source: the generator may overwrite or delete exactly those files.
func Owns(content []byte, source string) bool {
	src, gen := Source(content)
	return gen && src == source
}
