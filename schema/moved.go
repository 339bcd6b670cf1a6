package schema

import "go.yaml.in/yaml/v3"

// movedFrom reads a key's renamed_from: its earlier own path, written and
// checked like path (relative to the group's path, every parameter of the
// key exactly once).
func (l *loader) movedFrom(k *Key, n *yaml.Node) {
	what := "key " + k.QualifiedName() + ": renamed_from"
	k.MovedFrom = l.path(n, what, k.Params, k.Group)
	if len(k.MovedFrom.Segments) > 0 && k.MovedFrom.String() == k.Path.String() {
		l.errorf(n, "%s: %q is the key's path", what, k.MovedFrom)
		k.MovedFrom.Segments = nil
	}
}

// groupMovedFrom reads a group's renamed_from: its earlier path, with the
// group's parameters. A group with locks cannot move: programs built from
// the older schema would take the locks at the earlier path and no longer
// exclude newer ones.
func (l *loader) groupMovedFrom(g *Group, n *yaml.Node) {
	what := "group " + g.Name + ": renamed_from"
	g.MovedFrom = l.path(n, what, g.Params, nil)
	switch {
	case !g.Moved():
	case g.MovedFrom.String() == g.Path.String():
		l.errorf(n, "%s: %q is the group's path", what, g.MovedFrom)
		g.MovedFrom.Segments = nil
	case len(g.Locks) > 0:
		l.errorf(n, "%s: a group with locks cannot move (programs built from the older schema would take %s at the earlier path, and the two would no longer exclude each other); keep the group's path and give its keys renamed_from", what, g.Locks[0].QualifiedName())
		g.MovedFrom.Segments = nil
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
		old := k.FullMovedFrom()
		at := k.MovedFrom.Pos
		if len(k.MovedFrom.Segments) == 0 { // only its group moved
			at = k.Group.MovedFrom.Pos
		}
		for _, c := range current {
			if len(c.path.Segments) > 0 && pathsOverlap(old, c.path) {
				l.errs.add(at, "key %s: renamed_from %s can render to the same key as %s (%s), which is declared now; a write of %s would delete it", k.QualifiedName(), old, c.what, c.path, k.QualifiedName())
			}
		}
		for _, m := range moved {
			if pathsOverlap(old, m.FullMovedFrom()) {
				l.errs.add(at, "key %s: renamed_from %s can render to the same key as the renamed_from of key %s (%s)", k.QualifiedName(), old, m.QualifiedName(), m.FullMovedFrom())
			}
		}
		moved = append(moved, k)
	}
}
