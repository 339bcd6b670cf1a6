// Package glob matches byte strings against the Redis-style glob patterns
// of SCAN and of the authorization rules, in time linear in the string.
//
// Syntax, byte-wise (no UTF-8 decoding):
//
//   - '*' matches any run of bytes, '/' included (unlike path.Match);
//   - '?' matches one byte;
//   - "[abc]", "[a-z]" match one byte of the set; "[!a-z]" and "[^a-z]"
//     one byte outside it. A ']' right after the opening (or after the
//     '!'/'^') is a member, so "[]]" matches "]". A reversed range "[z-a]"
//     is the range "[a-z]". Inside a class '\' makes the next byte a
//     member ("[\]]", "[a-\\]");
//   - '\' makes the next byte literal; a '\' that ends the pattern is a
//     literal '\';
//   - a '[' with no closing ']' is a literal '['; the bytes after it are
//     read as pattern again.
//
// # Cost
//
// Compile turns the pattern into a non-deterministic automaton of one
// state per token (consecutive stars count once) and Match runs it with
// one bit per state: each byte of the string costs ceil((tokens+1)/64)
// word operations, with no backtracking, no recursion and no allocation
// for patterns of up to 4,095 tokens. The worst case of Match is thus
// O(len(s) × len(pattern)/64), whatever the pattern; Cost states the bound
// exactly. A backtracking matcher takes O(len(s) × len(pattern)) steps on
// '*aaaa…ab' against a long run of 'a', and far more on some inputs when it
// retries every star.
package glob

import (
	"math/bits"
	"strings"
)

// stackWords is how many words of automaton state Match keeps on its
// stack: patterns of up to 64×64-1 tokens allocate nothing per call.
const stackWords = 64

// Pattern is a compiled glob. It is immutable, so one Pattern may be used
// by many goroutines at once.
type Pattern struct {
	// prefix is the literal bytes every match starts with; literal tells
	// that the whole pattern is that literal, tail that it is the literal
	// followed by one star: both are matched without the automaton.
	prefix  string
	literal bool
	tail    bool

	// The automaton, when neither shortcut applies. State j means "the
	// first j tokens are matched"; state n (the last bit) accepts.
	n      int      // tokens
	words  int      // ceil((n+1)/64): words of one state set
	accept []uint64 // [256][words]: bit j of row c is set when token j is a byte set holding c
	star   []uint64 // [words]: bit j is set when token j is '*'
	// endStar tells that the last token is '*': once the accepting
	// state is reached no later byte can leave it.
	endStar bool
	// Necessary conditions checked before the automaton runs, which make
	// the usual misses cost little more than a comparison: a match has at
	// least minLen bytes (exactly minLen without a star), and its last
	// bytes match the tokens after the last star, tokens[suffix:].
	minLen int
	noStar bool
	suffix int
}

// token is one parsed pattern element: '*', or a set of bytes (a literal
// byte, '?' or a class).
type token struct {
	star bool
	set  [4]uint64 // bit c is set when byte c is a member
}

func (t *token) add(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		t.set[c>>6] |= 1 << (c & 63)
	}
}

// single returns the only member of t's set, if it has exactly one.
func (t *token) single() (byte, bool) {
	n, b := 0, 0
	for w, x := range t.set {
		if x != 0 {
			n += bits.OnesCount64(x)
			b = w*64 + bits.TrailingZeros64(x)
		}
	}
	return byte(b), n == 1
}

// Compile parses pattern. Every byte string is a valid pattern, so it
// cannot fail.
func Compile(pattern string) *Pattern {
	toks := parse(pattern)
	p := &Pattern{}
	// The literal prefix: tokens that each hold exactly one byte.
	var prefix []byte
	i := 0
	for ; i < len(toks); i++ {
		b, ok := toks[i].single()
		if toks[i].star || !ok {
			break
		}
		prefix = append(prefix, b)
	}
	p.prefix = string(prefix)
	switch {
	case i == len(toks):
		p.literal = true
		return p
	case i == len(toks)-1 && toks[i].star:
		p.tail = true
		return p
	}
	p.n = len(toks)
	p.words = (p.n + 1 + 63) / 64
	p.accept = make([]uint64, 256*p.words)
	p.star = make([]uint64, p.words)
	for j := range toks {
		t := &toks[j]
		if t.star {
			p.star[j/64] |= 1 << (j % 64)
			continue
		}
		for c := range 256 {
			if t.set[c>>6]&(1<<(c&63)) != 0 {
				p.accept[c*p.words+j/64] |= 1 << (j % 64)
			}
		}
	}
	p.endStar = toks[len(toks)-1].star
	p.noStar, p.suffix = true, 0
	for j := range toks {
		if toks[j].star {
			p.noStar, p.suffix = false, j+1
		} else {
			p.minLen++
		}
	}
	return p
}

// parse splits pattern into tokens, merging runs of '*'.
func parse(pattern string) []token {
	toks := make([]token, 0, len(pattern))
	for i := 0; i < len(pattern); {
		var t token
		switch c := pattern[i]; c {
		case '*':
			i++
			if len(toks) > 0 && toks[len(toks)-1].star {
				continue
			}
			t.star = true
		case '?':
			t.add(0, 255)
			i++
		case '[':
			if next, ok := parseClass(pattern, i, &t); ok {
				i = next
			} else {
				t = token{}
				t.add('[', '[')
				i++
			}
		case '\\':
			if i+1 < len(pattern) {
				c = pattern[i+1]
				i++
			}
			t.add(c, c)
			i++
		default:
			t.add(c, c)
			i++
		}
		toks = append(toks, t)
	}
	return toks
}

// parseClass reads the class that opens at pattern[i] == '[' into t and
// returns the index after its ']'; ok is false when no ']' closes it.
func parseClass(pattern string, i int, t *token) (next int, ok bool) {
	j := i + 1
	negate := j < len(pattern) && (pattern[j] == '!' || pattern[j] == '^')
	if negate {
		j++
	}
	for first := true; j < len(pattern) && (pattern[j] != ']' || first); j++ {
		first = false
		lo := pattern[j]
		if lo == '\\' && j+1 < len(pattern) {
			j++
			lo = pattern[j]
		}
		hi := lo
		if j+2 < len(pattern) && pattern[j+1] == '-' && pattern[j+2] != ']' {
			j += 2
			hi = pattern[j]
			if hi == '\\' && j+1 < len(pattern) {
				j++
				hi = pattern[j]
			}
		}
		t.add(min(lo, hi), max(lo, hi))
	}
	if j >= len(pattern) {
		return 0, false
	}
	if negate {
		for w := range t.set {
			t.set[w] = ^t.set[w]
		}
	}
	return j + 1, true
}

// Prefix returns the literal bytes every string the pattern matches
// starts with ("" when the pattern starts with a wildcard). SCAN uses it
// to visit only the keys in that range.
func (p *Pattern) Prefix() string { return p.prefix }

// Literal reports whether the pattern matches Prefix() only.
func (p *Pattern) Literal() bool { return p.literal }

// Cost is an upper bound of the work Match does on a string of n bytes,
// in word operations: (n+1) × (ceil((tokens+1)/64) + 1) (one pass of the
// automaton plus the checks before it), or n+1 for a literal pattern or a
// literal followed by one '*'.
func (p *Pattern) Cost(n int) int {
	if p.words == 0 {
		return n + 1
	}
	return (n + 1) * (p.words + 1)
}

// Match reports whether s matches the pattern.
func (p *Pattern) Match(s string) bool {
	matched, _ := p.run(s)
	return matched
}

// run matches s and also returns how many bytes of s the automaton read
// (tests bound the work with it).
func (p *Pattern) run(s string) (matched bool, read int) {
	switch {
	case p.literal:
		return s == p.prefix, len(s)
	case p.tail:
		return strings.HasPrefix(s, p.prefix), len(p.prefix)
	case !strings.HasPrefix(s, p.prefix):
		return false, len(p.prefix)
	case len(s) < p.minLen || p.noStar && len(s) != p.minLen || !p.suffixMatches(s):
		return false, 0
	case p.words == 1:
		return p.run1(s)
	default:
		return p.runN(s)
	}
}

// suffixMatches reports whether the last bytes of s (at least minLen
// long) are accepted by the tokens after the last star, one byte each.
func (p *Pattern) suffixMatches(s string) bool {
	s = s[len(s)-(p.n-p.suffix):]
	for i := 0; i < len(s); i++ {
		j := p.suffix + i
		if p.accept[int(s[i])*p.words+j/64]&(1<<(j%64)) == 0 {
			return false
		}
	}
	return true
}

// run1 is runN for automata of at most 64 states: the state set is one
// word.
func (p *Pattern) run1(s string) (bool, int) {
	star, final := p.star[0], uint64(1)<<p.n
	d := uint64(1)
	d |= (d & star) << 1
	for i := 0; i < len(s); i++ {
		// Advance every state whose token holds the byte, keep every
		// star state (it consumes the byte), then let each star state
		// also stand for the empty run (no two stars are adjacent, so one
		// step closes the set).
		d = (d&p.accept[s[i]])<<1 | d&star
		d |= (d & star) << 1
		if d == 0 || p.endStar && d&final != 0 {
			return d != 0, i + 1
		}
	}
	return d&final != 0, len(s)
}

// runN runs the automaton with a state set of p.words words.
func (p *Pattern) runN(s string) (bool, int) {
	var buf [stackWords]uint64
	var d []uint64
	if p.words <= stackWords {
		d = buf[:p.words]
	} else {
		d = make([]uint64, p.words)
	}
	d[0] = 1
	closeStars(d, p.star)
	last, final := p.words-1, uint64(1)<<(p.n%64)
	for i := 0; i < len(s); i++ {
		row := p.accept[int(s[i])*p.words : (int(s[i])+1)*p.words]
		var carry, starCarry, any uint64
		for w := range d {
			x := d[w] & row[w]
			nd := x<<1 | carry | d[w]&p.star[w]
			carry = x >> 63
			y := nd & p.star[w]
			nd |= y<<1 | starCarry
			starCarry = y >> 63
			d[w] = nd
			any |= nd
		}
		if any == 0 || p.endStar && d[last]&final != 0 {
			return any != 0, i + 1
		}
	}
	return d[last]&final != 0, len(s)
}

// closeStars adds to d the state after each star state in d.
func closeStars(d, star []uint64) {
	var carry uint64
	for w := range d {
		y := d[w] & star[w]
		d[w] |= y<<1 | carry
		carry = y >> 63
	}
}
