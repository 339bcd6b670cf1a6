package schema

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// compilePattern compiles a parameter's pattern so that it must match the
// whole value, as the schema format promises, and in the form generated
// code shows: the pattern as written when it already anchors both ends
// ("^[a-z0-9-]+$"), else anchored once ("[a-z]+" gives "^[a-z]+$"), and
// only when neither says the same as "^(?:pattern)$" (a top-level
// alternation, say) that form itself.
func compilePattern(v string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(v); err != nil {
		return nil, err
	}
	wrapped := `^(?:` + v + `)$`
	want, err := shape(wrapped)
	if err != nil {
		return nil, err
	}
	core := strings.TrimPrefix(v, "^")
	if strings.HasSuffix(core, "$") && !escaped(core, len(core)-1) {
		core = core[:len(core)-1]
	}
	for _, c := range []string{v, "^" + core + "$", `^(?:` + core + `)$`} {
		if got, err := shape(c); err == nil && got == want {
			return regexp.Compile(c)
		}
	}
	return regexp.Compile(wrapped)
}

// escaped reports whether the byte at i is escaped by an odd number of
// backslashes before it.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// shape is the parsed form of a pattern with concatenations flattened,
// empty matches inside them and a repeated begin- or end-of-text anchor
// dropped: two patterns of the
// same shape match the same strings. It is a sufficient test, not a
// complete one: patterns that differ only in ways it does not normalise
// compare unequal, and compilePattern then keeps the wrapped form.
func shape(p string) (string, error) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", err
	}
	return normalize(re.Simplify()).String(), nil
}

func normalize(re *syntax.Regexp) *syntax.Regexp {
	for i, sub := range re.Sub {
		re.Sub[i] = normalize(sub)
	}
	if re.Op != syntax.OpConcat {
		return re
	}
	var flat []*syntax.Regexp
	for _, sub := range re.Sub {
		if sub.Op == syntax.OpConcat {
			flat = append(flat, sub.Sub...)
		} else {
			flat = append(flat, sub)
		}
	}
	out := flat[:0:0]
	for _, sub := range flat {
		if sub.Op == syntax.OpEmptyMatch {
			continue
		}
		if n := len(out); n > 0 && (sub.Op == syntax.OpBeginText || sub.Op == syntax.OpEndText) && out[n-1].Op == sub.Op {
			continue
		}
		out = append(out, sub)
	}
	switch len(out) {
	case 0:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case 1:
		return out[0]
	}
	re.Sub = out
	return re
}
