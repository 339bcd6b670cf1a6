package schema

import "go.yaml.in/yaml/v3"

// movedPaths reads a renamed_from of a key or group: one earlier path, or
// a list of them (latest first), each written and checked like path.
// An earlier path that is the current one, or repeats another, is an
// error and left out.
func (l *loader) movedPaths(n *yaml.Node, what, whose string, current Path, own []*Param, outer *Group) []Path {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			l.errorf(n, "%s: want an earlier path or a list of them, got an empty list", what)
		}
	}
	var out []Path
	for _, it := range items {
		p := l.path(it, what, own, outer)
		if len(p.Segments) == 0 {
			continue
		}
		dup := p.String() == current.String()
		if dup {
			l.errorf(it, "%s: %q is the %s path", what, p, whose)
		}
		for _, q := range out {
			if q.String() == p.String() {
				l.errorf(it, "%s: %q is listed twice", what, p)
				dup = true
			}
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// movedFrom reads a key's renamed_from: its earlier own paths, written
// and checked like path (relative to the group's path, every parameter of
// the key exactly once).
func (l *loader) movedFrom(k *Key, n *yaml.Node) {
	k.MovedFrom = l.movedPaths(n, "key "+k.QualifiedName()+": renamed_from", "key's", k.Path, k.Params, k.Group)
}

// groupMovedFrom reads a group's renamed_from: its earlier paths, with the
// group's parameters. A group with locks cannot move: programs built from
// the older schema would take the locks at the earlier path and no longer
// exclude newer ones.
func (l *loader) groupMovedFrom(g *Group, n *yaml.Node) {
	what := "group " + g.Name + ": renamed_from"
	g.MovedFrom = l.movedPaths(n, what, "group's", g.Path, g.Params, nil)
	if g.Moved() && len(g.Locks) > 0 {
		l.errorf(n, "%s: a group with locks cannot move (programs built from the older schema would take %s at the earlier path, and the two would no longer exclude each other); keep the group's path and give its keys renamed_from", what, g.Locks[0].QualifiedName())
		g.MovedFrom = nil
	}
}

// checkMoves refuses an earlier path that some parameter values render to
// a key declared now, or to another key's earlier path: a write of the
// moved key removes the key at its earlier path, and a read falls back to
// it, so it must belong to this key alone.
func (l *loader) checkMoves() {
	var current []stored
	for _, lk := range l.s.AllLocks() {
		current = append(current, stored{"lock " + lk.QualifiedName(), lk.FullPath(), lk.Pos})
	}
	for _, k := range l.s.AllKeys() {
		current = append(current, stored{"key " + k.QualifiedName(), k.FullPath(), k.Pos})
	}
	var moved []*Key
	for _, k := range l.s.AllKeys() {
		if !k.Moved() {
			continue
		}
		for _, old := range k.FullMovedFroms() {
			at := old.Pos
			for _, c := range current {
				if len(c.path.Segments) > 0 && pathsOverlap(old, c.path) {
					l.errs.add(at, "key %s: renamed_from %s can render to the same key as %s (%s), which is declared now; a write of %s would delete it", k.QualifiedName(), old, c.what, c.path, k.QualifiedName())
				}
			}
			for _, m := range moved {
				for _, mo := range m.FullMovedFroms() {
					if pathsOverlap(old, mo) {
						l.errs.add(at, "key %s: renamed_from %s can render to the same key as the renamed_from of key %s (%s)", k.QualifiedName(), old, m.QualifiedName(), mo)
					}
				}
			}
		}
		moved = append(moved, k)
	}
}
