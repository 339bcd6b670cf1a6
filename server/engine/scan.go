package engine

import (
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// MaxScanPatternBytes is the longest SCAN pattern; a longer one is
// answered ErrQuotaExceeded and changes nothing. Matching
// costs about one machine word operation per key byte per 64 bytes of
// pattern (package internal/glob), so 1 KiB keeps that factor under 18 while
// leaving room for any pattern a key name needs (classes and escapes
// included): keys are topic-like names, far shorter than that.
const MaxScanPatternBytes = 1024

// Bounds of one SCAN request's work under the engine's lock.
const (
	// scanPage is the most keys one SCAN response lists, and scanPageBytes
	// the most key bytes (a longer first key is still listed alone), so
	// that a listing of many keys takes few round trips while a page of
	// long keys stays small.
	scanPage      = 500
	scanPageBytes = 64 << 10
	// scanExamine is the most keys one request examines.
	scanExamine = 4096
	// scanSteps is the matching budget of one request, in the units of
	// glob.Pattern.Cost (word operations): keys are examined while their
	// summed cost stays within it, the first key always.
	scanSteps = 1 << 20
)

// scanLimits overrides scanExamine and scanSteps (zero: the constant);
// tests lower them to force short pages.
type scanLimits struct {
	examine, steps int
}

// scan: SCAN glob [token] (beta on the real service). Keys are listed in
// byte-wise order, at most scanPage (and scanPageBytes) per response. The continuation token
// holds the last key the request examined (listed or not), sealed for the
// request's TokenScope and the pattern (scantoken.go), so the next request seeks past
// it in the ordered index and paging survives keys added or deleted in
// between: a key that exists for the whole walk is listed exactly once, a
// key added behind the cursor is not listed. A token this engine did not
// seal for this scope and pattern is answered ErrInvalidToken.
//
// Work under the lock is bounded whatever the store holds: a seek in the
// index (O(log n)), then at most scanExamine keys, whose matching cost
// (glob.Pattern.Cost: at most (len(key)+1) × (ceil((tokens+1)/64) + 1),
// so (len(key)+1) × 18 for the longest pattern) sums to at most scanSteps
// plus that of the first key, which is always examined so that every
// request makes progress (MaxKeyBytes bounds that last term). Only keys
// starting with the pattern's literal prefix are visited (a pattern
// without wildcards visits one key). A request that reaches either bound
// before the end answers the keys it found, possibly none, with a token:
// the protocol allows a short or empty page that is not the last. The
// page holds at most scanPage keys and scanPageBytes of keys (but always
// one matching key, however long). Keys Request.Visible refuses are
// examined (the token moves past them) but never listed; what Visible
// costs (Request.VisibleCost) counts in the matching budget.
func (e *Engine) scan(req *Request, now time.Time) Result {
	args := req.Args
	if len(args) != 2 && len(args) != 3 {
		return errResult(ErrWrongNumberOfArguments)
	}
	if len(args[1]) > MaxScanPatternBytes {
		return errResult(ErrQuotaExceeded)
	}
	var after string
	if len(args) == 3 {
		var ok bool
		if after, ok = e.tokens.open(req.TokenScope, args[1], args[2]); !ok {
			return errResult(ErrInvalidToken)
		}
	}
	s, err := e.readStamps(req, now, false, false)
	if err != "" {
		return e.stampRefusal(err, req, now)
	}
	pat := glob.Compile(string(args[1]))
	prefix := pat.Prefix()
	// Start at the token, or at the pattern's prefix when the token is
	// before every key that can match.
	from, skip := prefix, false
	if after != "" && after >= prefix {
		from, skip = after, true
	}
	examine, steps := e.scanLim.examine, e.scanLim.steps
	if examine <= 0 {
		examine = scanExamine
	}
	if steps <= 0 {
		steps = scanSteps
	}
	var (
		page      []string
		last      string // the last key examined: the token when more follow
		examined  int
		spent     int
		pageBytes int
		more      bool
	)
	e.order.seek(from, func(ent *entry) bool {
		k := ent.key
		if skip && k == from {
			return true
		}
		if !strings.HasPrefix(k, prefix) || pat.Literal() && k != prefix {
			return false // past every key that can match
		}
		cost := pat.Cost(len(k))
		if req.Visible != nil && req.VisibleCost != nil {
			cost += req.VisibleCost(len(k))
		}
		if examined > 0 && (examined >= examine || spent+cost > steps) {
			more = true
			return false
		}
		match := pat.Match(k) && (req.Visible == nil || req.Visible([]byte(k)))
		if match && (len(page) == scanPage || len(page) > 0 && pageBytes+len(k) > scanPageBytes) {
			more = true // k is listed by the next page
			return false
		}
		examined++
		spent += cost
		last = k
		if match {
			page = append(page, k)
			pageBytes += len(k)
		}
		return true
	})
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
		p = resp3.AppendBulkString(p, e.tokens.seal(req.TokenScope, args[1], last))
	}
	return Result{Payload: p, Version: e.requestTick(s)}
}
