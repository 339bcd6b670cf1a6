package runtime

import (
	"strconv"
	"strings"
)

// LockKeyOf returns the function that gives the concrete key of the lock
// that guards a concrete key: keyPath is the key's path template and
// lockPath its guard lock's, "{name}" segments being parameters as in
// NewTemplate, and the lock's parameters take the values of the key's
// parameters of the same names (a lock of the key's group shares the
// group's parameters; a top-level lock has none). Code generated for a
// guarded key passes it to migrate (Decl.GuardedBy), which rewrites the
// key under that lock's lease.
//
// The function's ok is false for a key whose shape is not keyPath's: a
// different number of segments, a literal segment that differs, or an
// empty segment where a parameter goes. A ListKeys glob of keyPath can
// match such keys (its '*' also matches '/', and a literal's glob
// characters may be spelled '?'), and they get no lock rather than a
// wrong one. Like Template.Match it checks the shape only, not parameter
// types or patterns.
//
// LockKeyOf panics on a malformed template or a lock parameter keyPath
// lacks: generated code passes the paths of a schema that loaded.
func LockKeyOf(keyPath, lockPath string) func(key []byte) (lock []byte, ok bool) {
	ksegs := parseTemplate("LockKeyOf", keyPath)
	lsegs := parseTemplate("LockKeyOf", lockPath)
	// from[i] is the index in ksegs of lock segment i's value; -1 for a
	// literal.
	from := make([]int, len(lsegs))
	for i, l := range lsegs {
		from[i] = -1
		if !l.param {
			continue
		}
		for j, k := range ksegs {
			if k.param && k.name == l.name {
				from[i] = j
				break
			}
		}
		if from[i] < 0 {
			panic("runtime: LockKeyOf: lock parameter " + strconv.Quote(l.name) + " is not in key path " + strconv.Quote(keyPath))
		}
	}
	return func(key []byte) ([]byte, bool) {
		vals := make([]string, len(ksegs))
		rest := string(key)
		for i, s := range ksegs {
			seg, tail, more := strings.Cut(rest, "/")
			if more != (i < len(ksegs)-1) || seg == "" || (!s.param && seg != s.lit) {
				return nil, false
			}
			vals[i] = seg
			rest = tail
		}
		var b []byte
		for i, l := range lsegs {
			if i > 0 {
				b = append(b, '/')
			}
			if from[i] < 0 {
				b = append(b, l.lit...)
			} else {
				b = append(b, vals[from[i]]...)
			}
		}
		return b, true
	}
}
