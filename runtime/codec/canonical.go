package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// maxCanonicalDepth bounds the nesting canonicalize follows. The encoder's
// own output never comes near it; the bound only keeps a hostile custom
// encoder from exhausting the stack.
const maxCanonicalDepth = 10000

var errMsgpackSyntax = errors.New("msgpack: malformed encoding")

// canonicalize rewrites one MessagePack document so that the entries of
// every map, at any depth, appear in ascending order of their encoded key
// bytes, ties broken by the encoded value bytes. Everything else is copied
// unchanged.
func canonicalize(src []byte) ([]byte, error) {
	c := canonicalizer{src: src}
	out, err := c.value(make([]byte, 0, len(src)), 0)
	if err != nil {
		return nil, err
	}
	if c.pos != len(src) {
		return nil, errTrailing
	}
	return out, nil
}

type canonicalizer struct {
	src     []byte
	pos     int
	scratch []byte
}

type mapEntry struct{ key, val []byte }

func (c *canonicalizer) value(out []byte, depth int) ([]byte, error) {
	if depth > maxCanonicalDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", errMsgpackSyntax, maxCanonicalDepth)
	}
	start := c.pos
	size, count, isMap, err := c.header()
	if err != nil {
		return nil, err
	}
	if count < 0 { // a scalar, string, binary or extension: copy it whole
		end := c.pos + size
		if end > len(c.src) || end < c.pos {
			return nil, fmt.Errorf("%w: truncated", errMsgpackSyntax)
		}
		c.pos = end
		return append(out, c.src[start:end]...), nil
	}
	// Every element takes at least one byte: a larger count is a lie, and
	// believing it would size the allocations below from untrusted input.
	if count > len(c.src)-c.pos {
		return nil, fmt.Errorf("%w: truncated", errMsgpackSyntax)
	}
	out = append(out, c.src[start:c.pos]...)
	if !isMap {
		for range count {
			if out, err = c.value(out, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	body := len(out)
	bounds := make([]int, 0, 2*count+1)
	bounds = append(bounds, body)
	for range 2 * count {
		if out, err = c.value(out, depth+1); err != nil {
			return nil, err
		}
		bounds = append(bounds, len(out))
	}
	entries := make([]mapEntry, count)
	for i := range entries {
		k0, k1, v1 := bounds[2*i], bounds[2*i+1], bounds[2*i+2]
		entries[i] = mapEntry{out[k0:k1], out[k1:v1]}
	}
	cmp := func(a, b mapEntry) int {
		if r := bytes.Compare(a.key, b.key); r != 0 {
			return r
		}
		return bytes.Compare(a.val, b.val)
	}
	if slices.IsSortedFunc(entries, cmp) {
		return out, nil
	}
	// The entries alias out; copy them aside before writing them back.
	c.scratch = append(c.scratch[:0], out[body:]...)
	for i := range entries {
		k0, k1, v1 := bounds[2*i]-body, bounds[2*i+1]-body, bounds[2*i+2]-body
		entries[i] = mapEntry{c.scratch[k0:k1], c.scratch[k1:v1]}
	}
	slices.SortFunc(entries, cmp)
	out = out[:body]
	for _, e := range entries {
		out = append(out, e.key...)
		out = append(out, e.val...)
	}
	return out, nil
}

// header consumes the type byte and any length field of the value at c.pos.
// For arrays and maps it returns the element (or entry) count; for every
// other value count is -1 and size is how many bytes of payload follow.
func (c *canonicalizer) header() (size, count int, isMap bool, err error) {
	if c.pos >= len(c.src) {
		return 0, 0, false, fmt.Errorf("%w: truncated", errMsgpackSyntax)
	}
	b := c.src[c.pos]
	c.pos++
	switch {
	case b <= 0x7f, b >= 0xe0, b == 0xc0, b == 0xc2, b == 0xc3:
		return 0, -1, false, nil
	case b <= 0x8f:
		return 0, int(b & 0x0f), true, nil
	case b <= 0x9f:
		return 0, int(b & 0x0f), false, nil
	case b <= 0xbf:
		return int(b & 0x1f), -1, false, nil
	}
	var n uint64
	switch b {
	case 0xc4, 0xd9: // bin8, str8
		n, err = c.uint(1)
		return int(n), -1, false, err
	case 0xc5, 0xda: // bin16, str16
		n, err = c.uint(2)
		return int(n), -1, false, err
	case 0xc6, 0xdb: // bin32, str32
		n, err = c.uint(4)
		return int(n), -1, false, err
	case 0xc7: // ext8: length, then a type byte
		n, err = c.uint(1)
		return int(n) + 1, -1, false, err
	case 0xc8:
		n, err = c.uint(2)
		return int(n) + 1, -1, false, err
	case 0xc9:
		n, err = c.uint(4)
		return int(n) + 1, -1, false, err
	case 0xcc, 0xd0:
		return 1, -1, false, nil
	case 0xcd, 0xd1:
		return 2, -1, false, nil
	case 0xca, 0xce, 0xd2:
		return 4, -1, false, nil
	case 0xcb, 0xcf, 0xd3:
		return 8, -1, false, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 plus a type byte
		return 1 + 1<<(b-0xd4), -1, false, nil
	case 0xdc:
		n, err = c.uint(2)
		return 0, int(n), false, err
	case 0xdd:
		n, err = c.uint(4)
		return 0, int(n), false, err
	case 0xde:
		n, err = c.uint(2)
		return 0, int(n), true, err
	case 0xdf:
		n, err = c.uint(4)
		return 0, int(n), true, err
	}
	return 0, 0, false, fmt.Errorf("%w: reserved type byte 0x%02x", errMsgpackSyntax, b)
}

func (c *canonicalizer) uint(width int) (uint64, error) {
	if len(c.src)-c.pos < width {
		return 0, fmt.Errorf("%w: truncated", errMsgpackSyntax)
	}
	p := c.src[c.pos : c.pos+width]
	c.pos += width
	switch width {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	default:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
}

// wellFormed reports whether src holds exactly one complete MessagePack
// value nesting at most MaxDepth arrays and maps. The decoder trusts the
// element counts in array and map headers before it reads the elements
// (five bytes claiming four billion map entries made it allocate until the
// process died), and recurses once per level of nesting (three million
// levels, 21 MB, overflowed the stack), so Decode checks first. The scan
// is iterative and linear: each value still to be read needs at least one
// byte, so a count larger than the bytes left is rejected at once.
func wellFormed(src []byte) error {
	c := canonicalizer{src: src}
	// open holds, for each array or map being read, how many values of it
	// are still to come, innermost last.
	var open []int
	for pending := 1; pending > 0; pending-- {
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		size, count, isMap, err := c.header()
		if err != nil {
			return err
		}
		if count < 0 {
			if size > len(src)-c.pos {
				return fmt.Errorf("%w: truncated", errMsgpackSyntax)
			}
			c.pos += size
			continue
		}
		if len(open) >= MaxDepth {
			return tooDeep()
		}
		if isMap {
			count *= 2
		}
		pending += count
		if pending-1 > len(src)-c.pos {
			return fmt.Errorf("%w: truncated", errMsgpackSyntax)
		}
		if count > 0 {
			open = append(open, count)
		}
	}
	if c.pos != len(src) {
		return errTrailing
	}
	return nil
}
