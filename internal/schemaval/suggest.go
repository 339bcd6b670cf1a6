package schemaval

import "strconv"

// suggest returns " (did you mean "x"?)" for the candidate closest to
// name, when one is close enough to be a likely typo, else "".
func suggest(name string, candidates []string) string {
	best, bestD := "", max(2, len(name)/3)+1
	for _, c := range candidates {
		if d := distance(name, c); d < bestD && d < len(name) {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + strconv.Quote(best) + "?)"
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
