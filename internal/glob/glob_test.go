package glob

import (
	"strings"
	"testing"
)

// cases holds every case of the two matchers this package replaced (the
// authorization rules' and SCAN's), plus the choices where they differed.
var cases = []struct {
	pattern, s string
	want       bool
}{
	// From the authorization rules' matcher.
	{"*", "", true},
	{"*", "a/b/c", true},
	{"sensors/*", "sensors/a/b", true},
	{"sensors/*", "sensor", false},
	{"a?c", "abc", true},
	{"a?c", "ac", false},
	{"[ab]x", "bx", true},
	{"[a-c]x", "dx", false},
	{"[!a]x", "bx", true},
	{"[^a]x", "ax", false},
	{`\*`, "*", true},
	{`\*`, "a", false},
	{"[ab", "[ab", true},
	{"*a*b*", "xxaxxbxx", true},
	{"*a*b", "xxaxxbxxa", false},
	{"exact", "exact", true},
	{"exact", "exactly", false},
	// From SCAN's matcher.
	{"*", "anything", true},
	{"", "", true},
	{"", "a", false},
	{"abc", "abc", true},
	{"abc", "abd", false},
	{"a*", "a", true},
	{"a*", "ab/c", true},
	{"a*", "ba", false},
	{"*c", "abc", true},
	{"a*c*e", "abcde", true},
	{"a*c*e", "abcdf", false},
	{"[abc]x", "dx", false},
	{"[^abc]x", "dx", true},
	{"[^abc]x", "ax", false},
	{"[a-c]", "b", true},
	{"[c-a]", "b", true},
	{"[a-c]", "d", false},
	{`[\]]`, "]", true},
	{`a\`, `a\`, true},
	{"[abc", "[abc", true},
	{"[abc", "a", false},
	{"thermostats/*/setPoint", "thermostats/kitchen/setPoint", true},
	{"thermostats/*/setPoint", "thermostats/kitchen/reading", false},
	{"*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	// Where the two differed: '!' negates, a leading ']' is a member.
	{"[!a]x", "ax", false},
	{"[!a]x", "!x", true},
	{"[]]", "]", true},
	{"[]a]", "a", true},
	{"[!]]", "a", true},
	{"[!]]", "]", false},
	{"[!]", "[!]", true},
	// Escapes, ranges and odd classes.
	{`[a-\]]`, "]", true},
	{`[a-\]]`, "^", true},
	{`[a-\]]`, `\`, false},
	{`[a-]`, "-", true},
	{`[\`, `[\`, true},
	{`\`, `\`, true},
	{`\\`, `\`, true},
	{`\a`, "a", true},
	{"[*]", "*", true},
	{"[*]", "a", false},
	{"[?]x", "?x", true},
	{"[?]x", "ax", false},
	{"a[", "a[", true},
	{"**", "", true},
	{"a**b", "ab", true},
	{"a**b", "axyb", true},
	{"?", "", false},
	{"*?", "", false},
	{"*?", "a", true},
	{"a*b*c", "abc", true},
	{"a*b*c", "acb", false},
	{"*/*", "a/1", true},
	{"*/*", "c", false},
	{"\xff*", "\xff\x00", true},
	{"[\x00-\xff]", "\x80", true},
	{"[^\x00-\xfe]", "\xff", true},
}

func TestMatch(t *testing.T) {
	for _, tc := range cases {
		if got := Compile(tc.pattern).Match(tc.s); got != tc.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
		if got := reference(tc.pattern, tc.s); got != tc.want {
			t.Errorf("reference(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		pattern, prefix string
		literal         bool
	}{
		{"", "", true},
		{"*", "", false},
		{"abc", "abc", true},
		{"ab*c", "ab", false},
		{"ab?c", "ab", false},
		{`a\*b*`, "a*b", false},
		{`a\*b`, "a*b", true},
		{"a[b]c[de]", "abc", false},
		{"a[b]c", "abc", true},
		{"a[!b]", "a", false},
		{"a[b", "a[b", true},
	} {
		p := Compile(tc.pattern)
		if got := p.Prefix(); got != tc.prefix {
			t.Errorf("Compile(%q).Prefix() = %q, want %q", tc.pattern, got, tc.prefix)
		}
		if got := p.Literal(); got != tc.literal {
			t.Errorf("Compile(%q).Literal() = %v, want %v", tc.pattern, got, tc.literal)
		}
	}
}

// TestMatchWorkIsBounded runs inputs on which a backtracking matcher
// takes about 10^9 steps or more. The checks before the automaton refuse
// some at once; for the others (key and pattern ending alike) it checks
// from the automaton's own count that each byte of the string was read at
// most once: the work is then at most Cost(len(s)) word operations, by
// construction of run1 and runN (one pass over the bytes, one pass over
// the state words per byte).
func TestMatchWorkIsBounded(t *testing.T) {
	long := strings.Repeat("a", 1<<18)
	for _, tc := range []struct {
		name, pattern, s string
		automaton        bool // the automaton reads the whole string
	}{
		// A backtracking matcher retries the 4 KiB literal at every
		// position: 2^18 × 2^12 ≈ 10^9 byte comparisons.
		{"long literal after a star", "*" + strings.Repeat("a", 4094) + "b", long, false},
		{"long literal between stars", "*" + strings.Repeat("a", 4094) + "c*b", long + "b", true},
		// Many stars, each a retry point for a matcher that backtracks to
		// every star (exponential), to the last one only (quadratic).
		{"many stars", strings.Repeat("*a", 2047) + "*b", long, false},
		{"many stars, same end", strings.Repeat("*a", 2047) + "*c*b", long + "b", true},
		{"stars and classes", strings.Repeat("*[a-c]?", 600) + "*d*[!a]", long + "b", true},
		{"one word automaton", "*" + strings.Repeat("a", 60) + "c*a", long, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Compile(tc.pattern)
			matched, read := p.run(tc.s)
			if matched {
				t.Fatal("matched")
			}
			if read > len(tc.s) || tc.automaton && read != len(tc.s) {
				t.Fatalf("read %d bytes of %d", read, len(tc.s))
			}
			// Tokens never outnumber pattern bytes.
			if bound, most := p.Cost(len(tc.s)), (len(tc.s)+1)*((len(tc.pattern)+64)/64+1); bound > most {
				t.Fatalf("Cost = %d, above (len(s)+1) × (len(pattern)/64+2) = %d", bound, most)
			}
		})
	}
}

func TestMatchAllocatesNothing(t *testing.T) {
	s := strings.Repeat("ab", 500)
	for _, pattern := range []string{
		"*", "a*", strings.Repeat("ab", 500), "*b", "*a?b*",
		strings.Repeat("*a", 500) + "*", // 1,002 tokens: 16 words
	} {
		p := Compile(pattern)
		if n := testing.AllocsPerRun(10, func() { p.Match(s) }); n != 0 {
			t.Errorf("Compile(%q).Match allocates %v times", pattern, n)
		}
	}
}

// reference is the specification written as directly as possible: a
// recursive matcher over the pattern text, memoised on (pattern index,
// string index). Use it on small inputs only.
func reference(pattern, s string) bool {
	memo := map[[2]int]bool{}
	var match func(pi, si int) bool
	match = func(pi, si int) bool {
		k := [2]int{pi, si}
		if v, ok := memo[k]; ok {
			return v
		}
		var r bool
		switch {
		case pi == len(pattern):
			r = si == len(s)
		case pattern[pi] == '*':
			r = match(pi+1, si) || si < len(s) && match(pi, si+1)
		case si == len(s):
			r = false
		case pattern[pi] == '?':
			r = match(pi+1, si+1)
		case pattern[pi] == '[':
			if in, next, ok := refClass(pattern, pi, s[si]); ok {
				r = in && match(next, si+1)
			} else {
				r = s[si] == '[' && match(pi+1, si+1)
			}
		case pattern[pi] == '\\' && pi+1 < len(pattern):
			r = s[si] == pattern[pi+1] && match(pi+2, si+1)
		default:
			r = s[si] == pattern[pi] && match(pi+1, si+1)
		}
		memo[k] = r
		return r
	}
	return match(0, 0)
}

// refClass reads the class at pattern[pi] == '[' into a list of ranges,
// then looks b up in it.
func refClass(pattern string, pi int, b byte) (in bool, next int, ok bool) {
	rest := pattern[pi+1:]
	negate := strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "^")
	if negate {
		rest = rest[1:]
	}
	// Members are single bytes after unescaping; a '-' between two
	// members (not before the closing ']') makes a range.
	type member struct {
		b       byte
		escaped bool
	}
	var ms []member
	used := 0
	closed := false
	for used < len(rest) {
		c := rest[used]
		if c == ']' && len(ms) > 0 {
			closed = true
			used++
			break
		}
		if c == '\\' && used+1 < len(rest) {
			ms = append(ms, member{rest[used+1], true})
			used += 2
			continue
		}
		ms = append(ms, member{c, false})
		used++
	}
	if !closed {
		return false, 0, false
	}
	for i := 0; i < len(ms); i++ {
		lo, hi := ms[i].b, ms[i].b
		if i+2 < len(ms) && ms[i+1].b == '-' && !ms[i+1].escaped {
			hi = ms[i+2].b
			i += 2
		}
		if min(lo, hi) <= b && b <= max(lo, hi) {
			in = true
		}
	}
	next = len(pattern) - len(rest) + used
	return in != negate, next, true
}

func FuzzMatch(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.pattern, tc.s)
	}
	f.Add("*a*a*a*b", "aaaaaaaaaaaaaaaaaa")
	f.Add(strings.Repeat("a?", 40)+"*", strings.Repeat("ab", 40))
	f.Add(strings.Repeat("*[a-c]", 70), strings.Repeat("c", 80))
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 200 || len(s) > 200 {
			return
		}
		p := Compile(pattern)
		got := p.Match(s)
		if want := reference(pattern, s); got != want {
			t.Fatalf("Compile(%q).Match(%q) = %v, reference says %v", pattern, s, got, want)
		}
		if got && !strings.HasPrefix(s, p.Prefix()) {
			t.Fatalf("Compile(%q) matched %q, which lacks the prefix %q", pattern, s, p.Prefix())
		}
		if got && p.Literal() && s != p.Prefix() {
			t.Fatalf("Compile(%q) is the literal %q but matched %q", pattern, p.Prefix(), s)
		}
	})
}
