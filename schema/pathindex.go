package schema

import (
	"slices"
	"strings"
)

// pathIndex is a trie of declared paths by segment, for the checks that
// would otherwise compare every path with every other (collisions, grant
// reach): a query follows only the branches its segments can take, so a
// schema of thousands of keys is checked in about linear time unless its
// paths really do meet.
type pathIndex struct {
	root  *trieNode
	steps int // trie nodes visited by queries, for tests that bound the work
}

type trieNode struct {
	depth  int
	lits   map[string]*trieNode
	params []*trieParam // children that are a parameter, one per paramClass
	ends   []int        // the paths that end here, by the index given to add
	maxEnd int          // the most segments of a path through this node
}

// trieParam is a child for the parameters of one class: they all render
// the same segments, so one of them stands for the rest.
type trieParam struct {
	class string
	p     *Param
	node  *trieNode
}

// paramClass groups parameters that render the same segments, both as
// pathsOverlap sees them (patterns, integer sizes, enum values) and as
// globReaches does (a coarser view).
func paramClass(p *Param) string {
	switch {
	case p.Type == nil:
		return "untyped"
	case p.Type.Kind == KindEnum:
		return "enum " + p.Type.Def.Name
	case p.Type.Kind.IsInteger():
		return "int " + p.Type.Kind.String()
	}
	return "string " + p.Pattern
}

func newPathIndex() *pathIndex { return &pathIndex{root: &trieNode{}} }

// add puts path i in the index. A path with errors (no segments) is left
// out, as the checks skip it.
func (x *pathIndex) add(i int, p Path) {
	if len(p.Segments) == 0 {
		return
	}
	n := x.root
	n.maxEnd = max(n.maxEnd, len(p.Segments))
	for _, s := range p.Segments {
		n = n.child(s)
		n.maxEnd = max(n.maxEnd, len(p.Segments))
	}
	n.ends = append(n.ends, i)
}

func (n *trieNode) child(s Segment) *trieNode {
	if s.Param == nil {
		c := n.lits[s.Literal]
		if c == nil {
			if n.lits == nil {
				n.lits = map[string]*trieNode{}
			}
			c = &trieNode{depth: n.depth + 1}
			n.lits[s.Literal] = c
		}
		return c
	}
	class := paramClass(s.Param)
	for _, tp := range n.params {
		if tp.class == class {
			return tp.node
		}
	}
	c := &trieNode{depth: n.depth + 1}
	n.params = append(n.params, &trieParam{class, s.Param, c})
	return c
}

// overlapping returns, in increasing order, the paths of the index that
// pathsOverlap(p, them) reports, p itself included if it was added.
func (x *pathIndex) overlapping(p Path) []int {
	var out []int
	want := len(p.Segments)
	var walk func(n *trieNode, i int)
	walk = func(n *trieNode, i int) {
		x.steps++
		if n.maxEnd < want {
			return
		}
		if i == want {
			out = append(out, n.ends...)
			return
		}
		s := p.Segments[i]
		if s.Param == nil {
			if c := n.lits[s.Literal]; c != nil {
				walk(c, i+1)
			}
			for _, tp := range n.params {
				if paramMatches(tp.p, s.Literal) {
					walk(tp.node, i+1)
				}
			}
			return
		}
		for lit, c := range n.lits {
			if paramMatches(s.Param, lit) {
				walk(c, i+1)
			}
		}
		for _, tp := range n.params {
			if paramsOverlap(s.Param, tp.p) {
				walk(tp.node, i+1)
			}
		}
	}
	if want > 0 {
		walk(x.root, 0)
	}
	slices.Sort(out)
	return out
}

// reachedBy returns, in increasing order, the paths of the index whose
// keys the pattern p.Glob() matches: globReaches(glob, exact, them).
//
// Glob writes a parameter as '*' between two '/' (or an end of the
// pattern), so a '*' matches one or more whole segments of a key (no key
// has an empty segment), and a literal segment matches one segment. A '?'
// (a glob character in a literal of a path with parameters) may match a
// '/', so a pattern holding one is not indexed: every path is returned,
// for globReaches to decide.
func (x *pathIndex) reachedBy(p Path) []int {
	glob, exact := p.Glob()
	if !exact && strings.Contains(glob, "?") {
		return x.all()
	}
	segs := p.Segments
	m := len(segs)
	type state struct {
		n *trieNode
		i int
	}
	seen := map[state]bool{}
	var out []int
	var walk func(n *trieNode, i int)
	walk = func(n *trieNode, i int) {
		if seen[state{n, i}] {
			return
		}
		seen[state{n, i}] = true
		x.steps++
		if m-i > n.maxEnd-n.depth {
			return // too few segments left below n for the rest of p
		}
		if i == m {
			out = append(out, n.ends...)
			return
		}
		if s := segs[i]; s.Param == nil {
			if c := n.lits[s.Literal]; c != nil {
				walk(c, i+1)
			}
			for _, tp := range n.params {
				if rendersSegment(tp.p, s.Literal) {
					walk(tp.node, i+1)
				}
			}
			return
		}
		// A '*': it ends with this child's segment, or goes on below it.
		for _, c := range n.lits {
			walk(c, i+1)
			walk(c, i)
		}
		for _, tp := range n.params {
			walk(tp.node, i+1)
			walk(tp.node, i)
		}
	}
	if m > 0 {
		walk(x.root, 0)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rendersSegment reports whether the parameter can render the segment lit
// as globReaches models it (pathAutomaton): an enum one of its values, an
// integer one or more of '-' and digits, a string anything (its pattern is
// not consulted).
func rendersSegment(p *Param, lit string) bool {
	switch {
	case p.Type != nil && p.Type.Kind == KindEnum:
		for _, v := range p.Type.Def.Values {
			if v.Value == lit {
				return true
			}
		}
		return false
	case p.Type != nil && p.Type.Kind.IsInteger():
		return lit != "" && strings.Trim(lit, "-0123456789") == ""
	}
	return true
}

// all returns every path of the index, in increasing order.
func (x *pathIndex) all() []int {
	var out []int
	var walk func(n *trieNode)
	walk = func(n *trieNode) {
		x.steps++
		out = append(out, n.ends...)
		for _, c := range n.lits {
			walk(c)
		}
		for _, tp := range n.params {
			walk(tp.node)
		}
	}
	walk(x.root)
	slices.Sort(out)
	return out
}

// PathSet holds many paths and tells which of them a key pattern reaches,
// without comparing the pattern with each: for the rules that ask it of
// every declaration (what a persist: true pattern also covers).
type PathSet struct {
	paths []Path
	idx   *pathIndex
}

// NewPathSet indexes paths; the indices ReachedBy returns are theirs.
func NewPathSet(paths []Path) *PathSet {
	s := &PathSet{paths: paths, idx: newPathIndex()}
	for i, p := range paths {
		s.idx.add(i, p)
	}
	return s
}

// ReachedBy returns, in increasing order, the indices i of the set's paths
// for which p.GlobReaches(paths[i]) holds.
func (s *PathSet) ReachedBy(p Path) []int {
	glob, exact := p.Glob()
	var out []int
	for _, i := range s.idx.reachedBy(p) {
		if globReaches(glob, exact, s.paths[i]) {
			out = append(out, i)
		}
	}
	return out
}
