// Package keyset remembers the keys a listing yielded, so that one a
// service lists again on a later page (a key rewritten while a SCAN goes
// on) is yielded once: runtime.Listing and ssgen keys share it.
package keyset

import (
	"bytes"
	"hash/maphash"
)

// Set remembers keys; its zero value is empty and ready. As long as keys
// come in strictly ascending order, as ssgen's service sends them, a key
// above the last one is new for certain and costs no lookup. Only a key at
// or below it is looked up, by a 64-bit hash of the key: keeping the keys
// themselves would cost a copy of every key listed. Two different keys
// with the same hash would make the second look like a repeat; for a
// million keys that is about one chance in 10^7, and only with a service
// that lists keys out of order.
//
// Add keeps a reference to the last key it was given: the caller must not
// change that key's bytes afterwards.
type Set struct {
	seed   maphash.Seed
	hashes map[uint64]struct{}
	last   []byte
	sorted bool // every key so far came after the one before
}

// Add reports whether key is new, and remembers it.
func (s *Set) Add(key []byte) bool {
	if s.hashes == nil {
		s.seed, s.hashes, s.sorted = maphash.MakeSeed(), map[uint64]struct{}{}, true
	}
	h := maphash.Bytes(s.seed, key)
	ascending := s.last == nil || bytes.Compare(key, s.last) > 0
	if !(s.sorted && ascending) {
		if _, dup := s.hashes[h]; dup {
			return false
		}
	}
	s.hashes[h] = struct{}{}
	s.sorted = s.sorted && ascending
	s.last = key
	return true
}
