package schema

import (
	"fmt"
	"sort"
)

// check runs the rules that span declarations, once everything is decoded.
func (l *loader) check() {
	l.checkNames()
	l.checkReserved()
	l.checkCycles()
	l.checkCollisions()
	l.checkMoves()
	l.checkGrants()
	l.checkVersions()
}

// namespace reports a name declared twice where generated Go code would
// give both the same identifier, at the later of the two declarations.
type namespace struct {
	l     *loader
	scope string
	decls []decl
}

type decl struct {
	name, what string
	pos        Pos
}

func (l *loader) namespace(scope string) *namespace { return &namespace{l: l, scope: scope} }

func (ns *namespace) declare(name, what string, p Pos) {
	if name != "" {
		ns.decls = append(ns.decls, decl{name, what, p})
	}
}

func (ns *namespace) check() {
	sort.SliceStable(ns.decls, func(i, j int) bool { return ns.decls[i].pos.before(ns.decls[j].pos) })
	seen := map[string]decl{}
	for _, d := range ns.decls {
		if first, dup := seen[d.name]; dup {
			ns.l.errs.add(d.pos, "%s: Go name %s is already used %s by %s (at %s)", d.what, d.name, ns.scope, first.what, note(first.pos))
			continue
		}
		seen[d.name] = d
	}
}

// checkNames enforces the Go namespaces of the generated package: the
// package scope holds declared types, enum constants and a type per group;
// the store holds an accessor per group and per top-level key and lock;
// a group holds an accessor per key and lock; a struct its fields.
func (l *loader) checkNames() {
	s := l.s
	pkg := l.namespace("in the package")
	for _, t := range s.Types {
		pkg.declare(t.Name, "type "+t.Name, t.Pos)
		for _, pv := range t.Previous {
			pkg.declare(pv.Name, fmt.Sprintf("version %d of type %s", pv.Version, t.Name), pv.Pos)
			fields := l.namespace("in struct " + pv.Name)
			for _, f := range pv.Fields {
				fields.declare(f.GoName, "field "+pv.Name+"."+f.Name, f.Pos)
			}
			fields.check()
		}
	}
	for _, g := range s.Groups {
		pkg.declare(g.Name, "group "+g.Name, g.Pos)
	}
	for _, t := range s.Types {
		for _, v := range t.Values {
			pkg.declare(v.GoName, fmt.Sprintf("enum %s value %q", t.Name, v.Value), v.Pos)
		}
		fields := l.namespace("in struct " + t.Name)
		for _, f := range t.Fields {
			fields.declare(f.GoName, "field "+t.Name+"."+f.Name, f.Pos)
		}
		fields.check()
	}
	pkg.check()
	store := l.namespace("on the store")
	for _, g := range s.Groups {
		store.declare(g.Name, "group "+g.Name, g.Pos)
	}
	for _, lk := range s.Locks {
		store.declare(lk.Name, "lock "+lk.Name, lk.Pos)
	}
	for _, k := range s.Keys {
		store.declare(k.Name, "key "+k.Name, k.Pos)
	}
	store.check()
	for _, g := range s.Groups {
		gs := l.namespace("in group " + g.Name)
		for _, lk := range g.Locks {
			gs.declare(lk.Name, "lock "+lk.QualifiedName(), lk.Pos)
		}
		for _, k := range g.Keys {
			gs.declare(k.Name, "key "+k.QualifiedName(), k.Pos)
		}
		gs.check()
	}
}

// checkCycles reports a struct that contains itself through required,
// non-container fields: Go cannot lay out such a type, and no finite value
// of it exists. Optional fields, lists and maps break a cycle.
func (l *loader) checkCycles() {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*TypeDef]int{}
	var visit func(t *TypeDef)
	visit = func(t *TypeDef) {
		state[t] = visiting
		for _, f := range t.Fields {
			if f.Optional || f.Type == nil || f.Type.Kind != KindStruct {
				continue
			}
			switch state[f.Type.Def] {
			case visiting:
				l.errs.add(f.Pos, "field %s.%s: type %s contains itself through required fields; make a field on the cycle optional, a list or a map", t.Name, f.Name, f.Type.Def.Name)
			case unvisited:
				visit(f.Type.Def)
			}
		}
		state[t] = done
	}
	for _, t := range l.s.Types {
		if t.Kind == KindStruct && state[t] == unvisited {
			visit(t)
		}
	}
}

// stored is a key or a lock: both occupy key strings in the store.
type stored struct {
	what string
	path Path
	pos  Pos
}

// checkCollisions reports two keys or locks that can render to the same
// key string, which would make them share and corrupt each other's data.
func (l *loader) checkCollisions() {
	var all []stored
	for _, lk := range l.s.AllLocks() {
		all = append(all, stored{"lock " + lk.QualifiedName(), lk.FullPath(), lk.Pos})
	}
	for _, k := range l.s.AllKeys() {
		all = append(all, stored{"key " + k.QualifiedName(), k.FullPath(), k.Pos})
	}
	idx := newPathIndex()
	for i, a := range all {
		idx.add(i, a.path)
	}
	// Each pair once, at the later declaration, as a pass over every pair
	// would: b in order, then each earlier a in order.
	for _, b := range all {
		for _, i := range idx.overlapping(b.path) {
			if a := all[i]; a.pos.before(b.pos) {
				l.errs.add(b.pos, "%s (%s) can render to the same key as %s (%s) at %s", b.what, b.path, a.what, a.path, note(a.pos))
			}
		}
	}
	l.steps += idx.steps
}
