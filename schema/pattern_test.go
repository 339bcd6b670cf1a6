package schema

import (
	"regexp"
	"testing"
)

func TestCompilePatternAnchorsOnce(t *testing.T) {
	for in, want := range map[string]string{
		"^[a-z0-9-]+$": "^[a-z0-9-]+$", // as written
		"[a-z]+":       "^[a-z]+$",
		"^[a-z]+":      "^[a-z]+$",
		"[a-z]+$":      "^[a-z]+$",
		`\Aab\z`:       `\Aab\z`,
		"a|b":          "^(?:a|b)$",
		"^a$|^b$":      "^(?:^a$|^b$)$", // not recognised as anchored: kept safe
		`a\$`:          `^a\$$`,
		"(?m)^a$":      "^(?:(?m)^a$)$",
		"":             "^$",
	} {
		re, err := compilePattern(in)
		if err != nil {
			t.Errorf("compilePattern(%q): %v", in, err)
			continue
		}
		if re.String() != want {
			t.Errorf("compilePattern(%q) = %q, want %q", in, re.String(), want)
		}
	}
	// \Q quotes the rest of the pattern, the wrapper's end included.
	for _, bad := range []string{"[a-", `\Qa$`} {
		if re, err := compilePattern(bad); err == nil {
			t.Errorf("compilePattern(%q) = %q, want an error", bad, re)
		}
	}
}

// FuzzCompilePattern checks that the form compilePattern picks matches
// exactly what the pattern anchored by wrapping matches.
func FuzzCompilePattern(f *testing.F) {
	for _, s := range [][2]string{
		{"^[a-z0-9-]+$", "kitchen-1"}, {"[a-z]+", "ab\n"}, {"a|b", "ab"}, {"^a$|^b$", "b"},
		{`\Qa$`, "a$"}, {"(?m)^a$", "a\n"}, {"a*$", ""}, {"(a)|b$", "a"}, {`x\\$`, `x\`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, value string) {
		re, err := compilePattern(pattern)
		if err != nil {
			return
		}
		ref := regexp.MustCompile(`^(?:` + pattern + `)$`)
		if re.MatchString(value) != ref.MatchString(value) {
			t.Fatalf("pattern %q as %q: %q matches %v, anchored by wrapping %v", pattern, re, value, re.MatchString(value), ref.MatchString(value))
		}
	})
}
