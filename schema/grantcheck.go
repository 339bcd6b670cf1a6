package schema

// checkGrants runs the rules of roles that span declarations: a role that
// may write a guarded key may take its guard lock (else it could never
// write it), and no grant's key pattern reaches the keys of a declaration
// the role was not granted the same access to (the broker would allow
// what the schema does not say).
func (l *loader) checkGrants() {
	all := l.storedPaths()
	idx := newPathIndex()
	for i, o := range all {
		idx.add(i, o.path)
	}
	reached := map[*Permission][]int{}
	for _, r := range l.s.Roles {
		perms := r.Permissions()
		access := map[string]Access{} // by what: "key A.B"
		for _, p := range perms {
			access[p.What()] = p.Access
		}
		for _, p := range perms {
			if p.Key != nil && p.Access&AccessWrite != 0 && p.Key.Guard != nil {
				if access["lock "+p.Key.Guard.QualifiedName()]&AccessWrite == 0 {
					g := firstGrant(p, AccessWrite)
					l.errs.add(g.Pos, "role %s: write %s: writes to %s are fenced by lock %s, which the role may not take; add %s under lock",
						r.Name, g.Name, p.Key.QualifiedName(), p.Key.Guard.QualifiedName(), p.Key.Guard.QualifiedName())
				}
			}
			if len(p.Path().Segments) == 0 {
				continue // a path with errors, already reported
			}
			glob, exact := p.Path().Glob()
			for _, bit := range []Access{AccessRead, AccessWrite} {
				if p.Access&bit == 0 {
					continue
				}
				if _, ok := reached[p]; !ok {
					reached[p] = idx.reachedBy(p.Path())
				}
				for _, i := range reached[p] {
					o := all[i]
					if access[o.what]&bit != 0 {
						continue
					}
					// The index is exact; globReaches confirms the few hits.
					l.steps++
					if !globReaches(glob, exact, o.path) {
						continue
					}
					g := firstGrant(p, bit)
					l.errs.add(g.Pos, "role %s: %s %s: the key pattern %q that grants %s also matches keys of %s (%s), which the role may not %s; grant that too, or give the paths a literal segment that tells them apart",
						r.Name, g.Verb, g.Name, glob, p.What(), o.what, o.path, accessVerb(bit))
				}
			}
		}
	}
	l.steps += idx.steps
}

func accessVerb(a Access) string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// firstGrant is the first of p's grants that gives it access a: the one
// a message about that access points at.
func firstGrant(p *Permission, a Access) *Grant {
	for _, g := range p.Grants {
		if verbAccess(g.Verb)&a != 0 {
			return g
		}
	}
	return p.Grants[0]
}

// storedPaths is every key and lock with its full path, for checkGrants.
func (l *loader) storedPaths() []stored {
	var out []stored
	for _, k := range l.s.AllKeys() {
		out = append(out, stored{"key " + k.QualifiedName(), k.FullPath(), k.Pos})
	}
	for _, lk := range l.s.AllLocks() {
		out = append(out, stored{"lock " + lk.QualifiedName(), lk.FullPath(), lk.Pos})
	}
	return out
}
