// Package suggest finds the name a misspelt one most likely meant, for
// "did you mean" hints in schema errors, value errors and the CLI.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "X"?)` naming the candidate closest
// to name, or "" when none is close: one edit for names of up to three
// characters, two for longer ones, one in four for names over eight (a
// swap of neighbours is one edit), or the same name in another case. Ties
// go to the earlier candidate.
func DidYouMean(name string, candidates []string) string {
	if name == "" {
		return ""
	}
	limit := 1
	if len(name) >= 4 {
		limit = max(2, len(name)/4)
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := editDistance(name, c)
		if strings.EqualFold(c, name) {
			d = 0
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// maxSuggestLen bounds the names editDistance compares, so that a hostile
// schema cannot make suggestions quadratic in a long name.
const maxSuggestLen = 64

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// count one. Names longer than maxSuggestLen are never close.
func editDistance(a, b string) int {
	if len(a) > maxSuggestLen || len(b) > maxSuggestLen {
		return maxSuggestLen
	}
	prev2 := make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
