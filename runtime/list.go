package runtime

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/ssgen/ssgen/internal/keyset"
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// Cursor is where a key listing resumes: the service's continuation token
// for a page, opaque to the client. It is valid text only for the pattern
// it was listed with. The empty Cursor is the first page.
type Cursor string

// ListOptions configure ListKeys.
type ListOptions struct {
	// From resumes an earlier listing of the same pattern: pass the
	// Cursor it had reached (Listing.Cursor), for example after a restart.
	From Cursor
	// Retries is how many times a page that failed with a retryable error
	// (IsRetryable: a timeout, a lost connection) is asked for again, from
	// the same cursor, before the error is yielded; 0 means 3, a negative
	// value none.
	Retries int
}

// defaultListRetries is ListOptions.Retries when zero.
const defaultListRetries = 3

// listRetryDelay is the pause before the first retry of a page; it doubles
// with each further one.
const listRetryDelay = 50 * time.Millisecond

// A Listing pages through the keys that match a glob pattern, with the
// service's SCAN verb. Get one from ListKeys and range over All:
//
//	l := c.ListKeys("thermostats/*", runtime.ListOptions{From: saved})
//	for key, err := range l.All(ctx) {
//		if err != nil {
//			return err // l.Cursor() still says where to resume
//		}
//		handle(key)
//		saved = l.Cursor()
//	}
//
// Within one listing each key is yielded once, even if the service repeats
// it on a later page (the one exception needs a service that lists keys
// out of order and a 64-bit hash collision). Under concurrent writers, every key that exists for
// the whole listing is yielded at least once; keys created or deleted
// while it runs may or may not be. A Listing is not safe for concurrent
// use, and All may be ranged over once.
type Listing struct {
	c       *Client
	pattern []byte
	retries int
	cursor  Cursor
	done    bool
	started bool
	tokens  map[Cursor]struct{} // tokens used: a repeated one would loop
	dedup   keyset.Set          // keys yielded: each once across pages
}

// ListKeys returns a Listing of the keys matching pattern, a glob in the
// service's syntax: '*' any run of bytes ('/' included), '?' one byte,
// "[abc]" "[a-z]" "[!a]" a set, '\' makes the next byte literal (see
// GlobEscape). Nothing is sent until All is ranged over.
func (c *Client) ListKeys(pattern string, opts ListOptions) *Listing {
	retries := opts.Retries
	switch {
	case retries == 0:
		retries = defaultListRetries
	case retries < 0:
		retries = 0
	}
	return &Listing{c: c, pattern: []byte(pattern), retries: retries, cursor: opts.From, tokens: map[Cursor]struct{}{}}
}

// Cursor is where a new listing of the same pattern resumes to yield every
// key this one has not yielded yet. While a key is being handled inside
// the loop, it points at that key's page, or past it once the key is the
// page's last: save it after handling a key, and a resumed listing may
// yield again some keys of the page that key was on, never skip one.
func (l *Listing) Cursor() Cursor { return l.cursor }

// Done reports whether the listing reached its last page.
func (l *Listing) Done() bool { return l.done }

// All yields the listed keys, asking for the next page only when the
// previous one has been consumed. An error ends the iteration: the
// context's, ErrInvalidArgument for an empty pattern, the service's
// (*ServiceError), a retryable error that outlasted its retries, or a
// *ProtocolError for a malformed page or a continuation token the
// service gave twice (which would loop forever).
func (l *Listing) All(ctx context.Context) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if l.started {
			yield(nil, invalidArg("a Listing can be ranged over once"))
			return
		}
		l.started = true
		if len(l.pattern) == 0 {
			yield(nil, invalidArg("empty pattern"))
			return
		}
		for !l.done {
			keys, next, err := l.page(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			if next != "" {
				if _, again := l.tokens[next]; again || next == l.cursor {
					yield(nil, &ProtocolError{Op: protocol.VerbScan, Reason: "continuation token repeated"})
					return
				}
				l.tokens[next] = struct{}{}
			}
			fresh := keys[:0]
			for _, k := range keys {
				if l.dedup.Add(k) {
					fresh = append(fresh, k)
				}
			}
			if len(fresh) == 0 {
				l.advance(next)
				continue
			}
			for i, k := range fresh {
				if i == len(fresh)-1 {
					l.advance(next)
				}
				if !yield(k, nil) {
					return
				}
			}
		}
	}
}

// advance moves past the current page.
func (l *Listing) advance(next Cursor) {
	l.cursor = next
	l.done = next == ""
}

// page fetches the page at the cursor, retrying retryable failures.
func (l *Listing) page(ctx context.Context) ([][]byte, Cursor, error) {
	delay := listRetryDelay
	for attempt := 0; ; attempt++ {
		keys, next, err := l.c.scan(ctx, l.pattern, l.cursor)
		if err == nil || !IsRetryable(err) || attempt >= l.retries || ctx.Err() != nil {
			if cerr := ctx.Err(); cerr != nil && err != nil {
				return nil, "", cerr
			}
			return keys, next, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, "", ctx.Err()
		case <-t.C:
		}
		delay *= 2
	}
}

// ScanPage sends one SCAN request: the keys matching pattern on the page
// at from (the empty Cursor: the first page), in the service's order, and
// the Cursor of the next page (empty after the last). Unlike a Listing it
// neither retries a failed page nor drops a key the service lists again;
// it is for a caller that keeps its own place inside a page, as ssgen keys
// --limit does. Errors are those of Listing.All.
func (c *Client) ScanPage(ctx context.Context, pattern string, from Cursor) ([][]byte, Cursor, error) {
	if pattern == "" {
		return nil, "", invalidArg("empty pattern")
	}
	return c.scan(ctx, []byte(pattern), from)
}

// scan sends one SCAN request and parses its page.
func (c *Client) scan(ctx context.Context, pattern []byte, from Cursor) ([][]byte, Cursor, error) {
	argBuf := [3][]byte{[]byte(protocol.VerbScan), pattern, []byte(from)}
	args := argBuf[:2]
	if from != "" {
		args = argBuf[:3]
	}
	r, _, err := c.invoke(ctx, protocol.VerbScan, args, reqOpts{})
	if err != nil {
		return nil, "", err
	}
	return parseScanPage(r.val)
}

var errScanShape = errors.New("want [[keys...]] or [[keys...], token]")

// parseScanPage accepts exactly the shape the official clients accept: a
// 1- or 2-element array whose first element is an array of bulk strings
// and whose optional second element is a non-empty bulk-string token.
// The keys are copies, the caller's to keep.
func parseScanPage(v resp3.Value) ([][]byte, Cursor, error) {
	bad := func(reason string) error {
		return &ProtocolError{Op: protocol.VerbScan, Reason: reason, Err: errScanShape}
	}
	if v.Kind != resp3.KindArray || len(v.Elems) < 1 || len(v.Elems) > 2 {
		return nil, "", bad("unexpected " + v.Kind.String() + " response")
	}
	list := v.Elems[0]
	if list.Kind != resp3.KindArray {
		return nil, "", bad("key list is a " + list.Kind.String())
	}
	size := 0
	for _, e := range list.Elems {
		if e.Kind != resp3.KindBulk {
			return nil, "", bad("key is a " + e.Kind.String())
		}
		size += len(e.Str)
	}
	// One copy for the page's keys; each key is capped at its own length,
	// so appending to one never overwrites the next.
	buf := make([]byte, 0, size)
	keys := make([][]byte, len(list.Elems))
	for i, e := range list.Elems {
		start := len(buf)
		buf = append(buf, e.Str...)
		keys[i] = buf[start:len(buf):len(buf)]
	}
	var next Cursor
	if len(v.Elems) == 2 {
		tok := v.Elems[1]
		if tok.Kind != resp3.KindBulk || len(tok.Str) == 0 {
			return nil, "", bad("continuation token is not a non-empty bulk string")
		}
		next = Cursor(tok.Str)
	}
	return keys, next, nil
}

// GlobEscape returns s with every glob metacharacter ('*', '?', '[', ']',
// '\') escaped, so that it matches only itself inside a ListKeys pattern.
func GlobEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			if b == nil {
				b = append(make([]byte, 0, len(s)+8), s[:i]...)
			}
			b = append(b, '\\')
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}
