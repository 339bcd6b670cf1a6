package engine

import (
	"encoding/hex"
	"sort"
	"time"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// scanPage is the most keys one SCAN response lists.
const scanPage = 100

// scan: SCAN glob [token] (beta, wire contract §8). Keys are listed in
// byte-wise order, at most scanPage per response; the continuation token
// is the hex form of the last key listed, so the next page starts after it
// even if keys were added or deleted in between. A token that is not such
// hex is a syntax error. Sorting on every page is O(n log n), acceptable
// for a local store.
func (e *Engine) scan(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 2 && len(args) != 3 {
		return errResult(ErrWrongArgs)
	}
	var after []byte
	if len(args) == 3 {
		var err error
		if after, err = hex.DecodeString(string(args[2])); err != nil || len(after) == 0 {
			return errResult(ErrSyntax)
		}
	}
	s, err := e.readStamps(req, now, false, false)
	if err != "" {
		return errResult(err)
	}
	keys := e.sortedKeys()
	start := 0
	if after != nil {
		start = sort.SearchStrings(keys, string(after))
		if start < len(keys) && keys[start] == string(after) {
			start++
		}
	}
	var page []string
	more := false
	for _, k := range keys[start:] {
		if !globMatch(args[1], k) {
			continue
		}
		if len(page) == scanPage {
			more = true
			break
		}
		page = append(page, k)
	}
	n := 1
	if more {
		n = 2
	}
	p := resp3.AppendArray(nil, n)
	p = resp3.AppendArray(p, len(page))
	for _, k := range page {
		p = resp3.AppendBulkString(p, k)
	}
	if more {
		p = resp3.AppendBulkString(p, hex.EncodeToString([]byte(page[len(page)-1])))
	}
	return Result{Payload: p, Version: e.requestTick(s)}
}

// globMatch reports whether s matches the Redis-style glob p: '*' any run
// of bytes, '?' one byte, '[abc]' '[^a-z]' a class, '\' escapes the next
// byte; a '[' without its ']' is literal. One backtracking point for the
// last '*' keeps it linear in practice and never recursive.
func globMatch(p []byte, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for px < len(p) || sx < len(s) {
		if px < len(p) {
			switch c := p[px]; c {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					px++
					sx++
					continue
				}
			case '[':
				if next, matched, ok := matchClass(p, px, s, sx); ok {
					if matched {
						px, sx = next, sx+1
						continue
					}
				} else if sx < len(s) && s[sx] == '[' {
					px++
					sx++
					continue
				}
			case '\\':
				lit, step := c, 1
				if px+1 < len(p) {
					lit, step = p[px+1], 2
				}
				if sx < len(s) && s[sx] == lit {
					px += step
					sx++
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if starP < 0 || starS >= len(s) {
			return false
		}
		starS++
		px, sx = starP+1, starS
	}
	return true
}

// matchClass matches s[sx] against the class that opens at p[px] == '['.
// ok is false when the class has no closing ']'; next is the index after it.
func matchClass(p []byte, px int, s string, sx int) (next int, matched, ok bool) {
	i := px + 1
	neg := i < len(p) && p[i] == '^'
	if neg {
		i++
	}
	hit := false
	for ; i < len(p) && p[i] != ']'; i++ {
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		hi := lo
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			hi = p[i+2]
			if hi == '\\' && i+3 < len(p) {
				hi = p[i+3]
				i++
			}
			i += 2
			if lo > hi {
				lo, hi = hi, lo
			}
		}
		if sx < len(s) && lo <= s[sx] && s[sx] <= hi {
			hit = true
		}
	}
	if i >= len(p) {
		return 0, false, false
	}
	return i + 1, sx < len(s) && hit != neg, true
}
