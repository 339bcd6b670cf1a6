package schema

import "strings"

// Glob returns how the broker's authorization and persistence rules name
// the keys of the path. A path without parameters is one key: exact is
// true and glob is the key itself. Otherwise glob is a pattern of the
// state store's glob syntax in which each parameter is '*' and each glob
// character of a literal ('*', '?', '[', '\') is '?'. A '*' also matches
// '/', so the pattern may match keys that no declaration renders, never
// fewer than the path's; checkGrants refuses a grant whose pattern would
// reach another declaration's keys.
func (p Path) Glob() (glob string, exact bool) {
	exact = true
	for _, s := range p.Segments {
		if s.Param != nil {
			exact = false
		}
	}
	var b strings.Builder
	for i, s := range p.Segments {
		if i > 0 {
			b.WriteByte('/')
		}
		switch {
		case s.Param != nil:
			b.WriteByte('*')
		case exact:
			b.WriteString(s.Literal)
		default:
			for j := 0; j < len(s.Literal); j++ {
				if c := s.Literal[j]; strings.IndexByte(`*?[\`, c) >= 0 {
					b.WriteByte('?')
				} else {
					b.WriteByte(c)
				}
			}
		}
	}
	return b.String(), exact
}

// GlobReaches reports whether the pattern Glob returns for p matches a key
// that q can render: what a broker rule written for p grants or persists
// beyond p's own keys.
func (p Path) GlobReaches(q Path) bool {
	g, exact := p.Glob()
	return globReaches(g, exact, q)
}

// globReaches reports whether the glob (or exact key) that Glob returned
// matches some key the path q can render. It runs the glob and q, both
// turned into automata over bytes, side by side, looking for a key both
// accept. A parameter of q renders to: one of its enum values; one or
// more of '-' and digits for an integer; one or more bytes other than '/'
// for a string (its pattern is not consulted: a false alarm asks for a
// clearer schema, a missed one would let a role reach keys it was not
// granted).
func globReaches(glob string, exact bool, q Path) bool {
	g := compileGlob(glob, exact)
	a := pathAutomaton(q)
	type state struct{ i, j int }
	seen := map[state]bool{}
	stack := []state{{0, 0}}
	push := func(s state) {
		if !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	seen[state{0, 0}] = true
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.i == len(g) {
			if a.final[s.j] {
				return true
			}
			continue
		}
		t := g[s.i]
		if t.kind == globStar {
			push(state{s.i + 1, s.j}) // the star matches nothing more
		}
		for _, e := range a.edges[s.j] {
			if !t.admits(e.label) {
				continue
			}
			if t.kind == globStar {
				push(state{s.i, e.to})
			} else {
				push(state{s.i + 1, e.to})
			}
		}
	}
	return false
}

type globKind uint8

const (
	globByte globKind = iota // one given byte
	globOne                  // '?': any one byte
	globStar                 // '*': any run of bytes
)

type globToken struct {
	kind globKind
	b    byte
}

// admits reports whether the token can consume a byte the label allows.
// Every label allows at least one byte.
func (t globToken) admits(l label) bool {
	if t.kind != globByte {
		return true
	}
	return l.allows(t.b)
}

// compileGlob reads the subset of glob syntax Glob writes: literal bytes,
// '?' and '*'.
func compileGlob(glob string, exact bool) []globToken {
	out := make([]globToken, 0, len(glob))
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case !exact && c == '*':
			if len(out) == 0 || out[len(out)-1].kind != globStar {
				out = append(out, globToken{kind: globStar})
			}
		case !exact && c == '?':
			out = append(out, globToken{kind: globOne})
		default:
			out = append(out, globToken{kind: globByte, b: c})
		}
	}
	return out
}

// label is the set of bytes an edge of a path automaton consumes.
type label struct {
	kind labelKind
	b    byte
}

type labelKind uint8

const (
	labelByte     labelKind = iota // one given byte
	labelNotSlash                  // any byte but '/'
	labelIntChar                   // '-' or a digit
)

func (l label) allows(c byte) bool {
	switch l.kind {
	case labelByte:
		return c == l.b
	case labelNotSlash:
		return c != '/'
	}
	return c == '-' || c >= '0' && c <= '9'
}

type edge struct {
	label label
	to    int
}

// automaton is a non-deterministic automaton without empty moves: edges
// per state, and the accepting states.
type automaton struct {
	edges [][]edge
	final []bool
}

func (a *automaton) state() int {
	a.edges = append(a.edges, nil)
	a.final = append(a.final, false)
	return len(a.edges) - 1
}

func (a *automaton) edge(from int, l label, to int) {
	a.edges[from] = append(a.edges[from], edge{l, to})
}

// pathAutomaton accepts (a superset of) the keys q renders: see
// globReaches.
func pathAutomaton(q Path) *automaton {
	a := &automaton{}
	cur := a.state()
	lit := func(s string) {
		for i := 0; i < len(s); i++ {
			next := a.state()
			a.edge(cur, label{kind: labelByte, b: s[i]}, next)
			cur = next
		}
	}
	for i, seg := range q.Segments {
		if i > 0 {
			lit("/")
		}
		p := seg.Param
		switch {
		case p == nil:
			lit(seg.Literal)
		case p.Type != nil && p.Type.Kind == KindEnum:
			end := a.state()
			for _, v := range p.Type.Def.Values {
				from := cur
				for j := 0; j < len(v.Value); j++ {
					to := end
					if j < len(v.Value)-1 {
						to = a.state()
					}
					a.edge(from, label{kind: labelByte, b: v.Value[j]}, to)
					from = to
				}
			}
			cur = end
		default:
			l := label{kind: labelNotSlash}
			if p.Type != nil && p.Type.Kind.IsInteger() {
				l = label{kind: labelIntChar}
			}
			next := a.state()
			a.edge(cur, l, next)
			a.edge(next, l, next)
			cur = next
		}
	}
	a.final[cur] = true
	return a
}
