package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/keyset"
	"github.com/ssgen/ssgen/runtime"
)

// keys --limit must resume right after the last key it printed, on any
// state store. The service's continuation token is opaque and names a
// page whose size the service picks, so it alone cannot say where inside
// a page a listing stopped. ssgen's cursor therefore carries the token of
// the page the last printed key was on together with that key: a resumed
// listing asks for the same page and starts after the key. If the key has
// gone meanwhile, a page in ascending order (ssgen's service sends them so)
// starts at the first key above it; a page in another order is listed
// whole, repeating rather than losing keys. Once a page is printed to its
// end, the cursor is the next page's token alone.

// keysCursorPrefix starts every cursor ssgen keys prints; the rest is
// base64url of: 4 bytes of the GLOB's FNV-1a hash, the token's length as
// a uvarint, the token, the last printed key (empty: none).
const keysCursorPrefix = "k1."

// maxKeysCursor bounds a --cursor argument (a key up to the protocol's
// limits would not fit on a command line anyway).
const maxKeysCursor = 1 << 20

// keysCursor is a place in a listing: the page to ask for and the key of
// that page printed last (nil: none of it).
type keysCursor struct {
	token runtime.Cursor
	after []byte
}

// String is the cursor as printed, bound to pattern.
func (c *keysCursor) String(pattern string) string {
	b := binary.BigEndian.AppendUint32(nil, globHash(pattern))
	b = binary.AppendUvarint(b, uint64(len(c.token)))
	b = append(b, c.token...)
	b = append(b, c.after...)
	return keysCursorPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func globHash(pattern string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(pattern))
	return h.Sum32()
}

// parseKeysCursor reads a --cursor printed by a listing of pattern.
func parseKeysCursor(s, pattern string) (keysCursor, error) {
	bad := func(why string) (keysCursor, error) {
		return keysCursor{}, usageErrorf("--cursor: %s (use the cursor a listing of the same GLOB printed)", why)
	}
	rest, ok := strings.CutPrefix(s, keysCursorPrefix)
	if !ok || len(s) > maxKeysCursor {
		return bad("not a cursor printed by ssgen keys")
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(b) < 5 {
		return bad("not a cursor printed by ssgen keys")
	}
	if binary.BigEndian.Uint32(b) != globHash(pattern) {
		return bad("printed for another GLOB")
	}
	b = b[4:]
	n, size := binary.Uvarint(b)
	if size <= 0 || n > uint64(len(b)-size) {
		return bad("not a cursor printed by ssgen keys")
	}
	b = b[size:]
	c := keysCursor{token: runtime.Cursor(b[:n])}
	if len(b) > int(n) {
		c.after = b[n:]
	}
	return c, nil
}

// listKeys prints, through emit, the keys matching pattern from cursor at
// on, at most limit of them (0: all). It returns where a later listing
// resumes: nil once the last page was printed to its end, else the place
// after the last key printed (also with an error, which is either emit's
// as a *writeError or the listing's).
func listKeys(ctx context.Context, c *runtime.Client, pattern string, at keysCursor, limit int, emit func([]byte) error) (*keysCursor, error) {
	var seen keyset.Set // each key printed once per run, should a service list one again
	tokens := map[runtime.Cursor]bool{}
	n := 0
	for {
		keys, next, err := scanPage(ctx, c, pattern, at.token)
		if err != nil {
			return &at, err
		}
		if next != "" {
			if tokens[next] || next == at.token {
				return &at, errors.New("the service repeated a continuation token")
			}
			tokens[next] = true
		}
		keys = keys[resumeIndex(keys, at.after):]
		for i, k := range keys {
			if !seen.Add(k) {
				continue
			}
			if err := emit(k); err != nil {
				return &at, &writeError{err}
			}
			at.after = k
			if n++; n == limit {
				if i < len(keys)-1 {
					return &at, nil
				}
				if next == "" {
					return nil, nil
				}
				return &keysCursor{token: next}, nil
			}
		}
		if next == "" {
			return nil, nil
		}
		at = keysCursor{token: next}
	}
}

// resumeIndex is where to start in a page after the key printed last.
func resumeIndex(keys [][]byte, after []byte) int {
	if after == nil {
		return 0
	}
	for i, k := range keys {
		if bytes.Equal(k, after) {
			return i + 1
		}
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return 0 // not in order: list the page again rather than lose a key
		}
	}
	for i, k := range keys {
		if bytes.Compare(k, after) > 0 {
			return i
		}
	}
	return len(keys)
}

// scanPage asks for one page, again after a retryable failure, as
// runtime.Listing does.
func scanPage(ctx context.Context, c *runtime.Client, pattern string, from runtime.Cursor) ([][]byte, runtime.Cursor, error) {
	delay := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		keys, next, err := c.ScanPage(ctx, pattern, from)
		if err == nil || !runtime.IsRetryable(err) || attempt == 3 || ctx.Err() != nil {
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
