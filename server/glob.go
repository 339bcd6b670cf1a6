package server

// globMatch reports whether s matches pattern, byte-wise: '*' matches any
// run of bytes ('/' included, unlike path.Match), '?' one byte, "[abc]",
// "[a-z]" and "[!a]" or "[^a]" one byte of (or not of) a set, and '\'
// makes the next byte literal. A malformed class ("[ab" with no ']')
// matches its '[' literally. The '*' backtracking keeps it linear in
// practice: only the latest star is retried.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starI = p, i
				p++
				continue
			case '?':
				p++
				i++
				continue
			case '[':
				if ok, next, valid := matchClass(pattern, p, s[i]); valid {
					if ok {
						p, i = next, i+1
						continue
					}
				} else if s[i] == '[' {
					p++
					i++
					continue
				}
			case '\\':
				if p+1 < len(pattern) && pattern[p+1] == s[i] {
					p += 2
					i++
					continue
				}
			default:
				if c == s[i] {
					p++
					i++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starI++
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches b against the class starting at pattern[p] == '['.
// It returns whether b is in the class, the index after the class, and
// whether the class is well formed.
func matchClass(pattern string, p int, b byte) (ok bool, next int, valid bool) {
	j := p + 1
	negate := j < len(pattern) && (pattern[j] == '!' || pattern[j] == '^')
	if negate {
		j++
	}
	first := true
	for j < len(pattern) && (pattern[j] != ']' || first) {
		first = false
		lo := pattern[j]
		if lo == '\\' && j+1 < len(pattern) {
			j++
			lo = pattern[j]
		}
		hi := lo
		if j+2 < len(pattern) && pattern[j+1] == '-' && pattern[j+2] != ']' {
			hi = pattern[j+2]
			j += 2
		}
		if lo <= b && b <= hi {
			ok = true
		}
		j++
	}
	if j >= len(pattern) {
		return false, 0, false
	}
	return ok != negate, j + 1, true
}
