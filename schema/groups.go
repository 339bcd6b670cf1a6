package schema

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/suggest"
)

var groupFields = []string{"doc", "path", "params", "keys", "locks", "renamed_from"}

func (l *loader) group(p pair) *Group {
	g := &Group{Name: p.name, Pos: l.pos(p.key)}
	what := "group " + p.name
	if !isExported(p.name) {
		l.errorf(p.key, "%s: name must be %s", what, exportedRule)
	}
	var pathN, keysN, locksN, movedN *yaml.Node
	for _, q := range l.mapping(p.val, what, groupFields...) {
		switch q.name {
		case "renamed_from":
			movedN = q.val
		case "doc":
			g.Doc, _ = l.str(q.val, what+": doc")
		case "path":
			pathN = q.val
		case "params":
			g.Params = l.params(q.val, what, nil)
		case "keys":
			keysN = q.val
		case "locks":
			locksN = q.val
		}
	}
	if p.val.Kind != yaml.MappingNode {
		return nil
	}
	if pathN == nil {
		l.errorf(p.key, "%s: path is required", what)
	} else {
		g.Path = l.path(pathN, what, g.Params, nil)
	}
	// Locks first: keys resolve their guards against them.
	if locksN != nil {
		g.Locks = l.locks(g, locksN)
	}
	if keysN != nil {
		g.Keys = l.keys(g, keysN)
	}
	if keysN == nil && locksN == nil {
		l.errorf(p.key, "%s: want keys or locks", what)
	}
	if movedN != nil {
		l.groupMovedFrom(g, movedN)
	}
	return g
}

var keyFields = []string{"doc", "path", "params", "type", "encoding", "ttl", "guard", "persist", "renamed_from"}

func (l *loader) keys(g *Group, n *yaml.Node) []*Key {
	var out []*Key
	for _, p := range l.mapping(n, "keys") {
		k := &Key{Name: p.name, Group: g, Pos: l.pos(p.key), Encoding: l.s.Encoding}
		what := "key " + k.QualifiedName()
		if !isExported(p.name) {
			l.errorf(p.key, "%s: name must be %s", what, exportedRule)
		}
		var pathN, encN, guardN, movedN *yaml.Node
		for _, q := range l.mapping(p.val, what, keyFields...) {
			switch q.name {
			case "doc":
				k.Doc, _ = l.str(q.val, what+": doc")
			case "path":
				pathN = q.val
			case "params":
				k.Params = l.params(q.val, what, g)
			case "type":
				k.Type = l.typeExpr(q.val, what)
			case "encoding":
				encN = q.val
				if e, ok := l.encoding(q.val); ok {
					k.Encoding, k.EncodingSet = e, true
				}
			case "ttl":
				k.TTL = l.ttl(q.val, what)
			case "guard":
				guardN = q.val
			case "persist":
				k.Persist, _ = l.boolean(q.val, what+": persist")
			case "renamed_from":
				movedN = q.val
			}
		}
		if p.val.Kind != yaml.MappingNode {
			continue
		}
		if pathN == nil {
			l.errorf(p.key, "%s: path is required", what)
		} else {
			k.Path = l.path(pathN, what, k.Params, g)
		}
		if !hasKey(p.val, "type") {
			l.errorf(p.key, "%s: type is required", what)
		}
		if k.Type != nil {
			l.checkEncoding(k, encN)
		}
		if guardN != nil {
			k.Guard = l.guard(k, guardN)
		}
		if movedN != nil {
			l.movedFrom(k, movedN)
		}
		out = append(out, k)
	}
	return out
}

var lockFields = []string{"doc", "path", "params", "ttl"}

func (l *loader) locks(g *Group, n *yaml.Node) []*Lock {
	var out []*Lock
	for _, p := range l.mapping(n, "locks") {
		lk := &Lock{Name: p.name, Group: g, Pos: l.pos(p.key)}
		what := "lock " + lk.QualifiedName()
		if !isExported(p.name) {
			l.errorf(p.key, "%s: name must be %s", what, exportedRule)
		}
		var pathN *yaml.Node
		haveTTL := false
		for _, q := range l.mapping(p.val, what, lockFields...) {
			switch q.name {
			case "doc":
				lk.Doc, _ = l.str(q.val, what+": doc")
			case "path":
				pathN = q.val
			case "params":
				lk.Params = l.params(q.val, what, g)
			case "ttl":
				haveTTL = true
				lk.TTL = l.ttl(q.val, what)
			}
		}
		if p.val.Kind != yaml.MappingNode {
			continue
		}
		if pathN == nil {
			l.errorf(p.key, "%s: path is required", what)
		} else {
			lk.Path = l.path(pathN, what, lk.Params, g)
		}
		if !haveTTL {
			l.errorf(p.key, "%s: ttl is required (a lease must expire when its holder dies)", what)
		}
		out = append(out, lk)
	}
	return out
}

// ttl decodes a positive Go duration in whole milliseconds: the state
// store's PX option counts milliseconds.
func (l *loader) ttl(n *yaml.Node, what string) time.Duration {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		l.errorf(n, "%s: ttl: want a Go duration like 30s, got %s", what, describe(n))
		return 0
	}
	d, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		l.errorf(n, "%s: ttl %q: want a Go duration like 30s or 1m30s", what, n.Value)
		return 0
	case d <= 0:
		l.errorf(n, "%s: ttl %s: must be positive", what, n.Value)
		return 0
	case d%time.Millisecond != 0:
		l.errorf(n, "%s: ttl %s: must be a whole number of milliseconds (the state store counts expiry in ms)", what, n.Value)
		return 0
	}
	return d
}

var paramFields = []string{"type", "pattern", "doc"}

// params decodes a params mapping. outer is the enclosing group of a key's
// or lock's own parameters, whose names may not be reused.
func (l *loader) params(n *yaml.Node, what string, outer *Group) []*Param {
	var out []*Param
	for _, p := range l.mapping(n, what+": params") {
		pr := &Param{Name: p.name, Pos: l.pos(p.key)}
		pwhat := what + ": parameter " + p.name
		if !isParamName(p.name) {
			l.errorf(p.key, "%s: name must be a Go identifier (ASCII letters, digits, '_'; not a keyword)", pwhat)
		}
		if outer != nil {
			for _, gp := range outer.Params {
				if gp.Name == p.name {
					l.errorf(p.key, "%s: already a parameter of group %s (at %s)", pwhat, outer.Name, note(gp.Pos))
				}
			}
		}
		var typeN, patN *yaml.Node
		if p.val.Kind == yaml.MappingNode {
			for _, q := range l.mapping(p.val, pwhat, paramFields...) {
				switch q.name {
				case "type":
					typeN = q.val
				case "pattern":
					patN = q.val
				case "doc":
					pr.Doc, _ = l.str(q.val, pwhat+": doc")
				}
			}
			if typeN == nil {
				l.errorf(p.val, "%s: type is required", pwhat)
			}
		} else {
			typeN = p.val
		}
		if typeN != nil {
			pr.Type = l.paramType(typeN, pwhat)
		}
		if patN != nil {
			l.pattern(pr, patN, pwhat)
		}
		out = append(out, pr)
	}
	return out
}

func (l *loader) paramType(n *yaml.Node, what string) *Type {
	v, ok := l.str(n, what+": type")
	if !ok {
		return nil
	}
	if k, ok := scalarKinds[v]; ok && (k == KindString || k.IsInteger()) {
		return &Type{Kind: k, Pos: l.pos(n)}
	}
	if td := l.typeDef(v); td != nil && td.Kind == KindEnum {
		for _, ev := range td.Values {
			if strings.Contains(ev.Value, "/") {
				l.errorf(n, "%s: enum %s has value %q, which contains '/' and cannot fill a path segment", what, td.Name, ev.Value)
			}
		}
		return &Type{Kind: KindEnum, Def: td, Pos: l.pos(n)}
	}
	l.errorf(n, "%s: type %q: a parameter is a string, an integer type or an enum%s", what, v,
		suggest.DidYouMean(v, l.typeNames(func(k Kind) bool { return k == KindString || k.IsInteger() || k == KindEnum })))
	return nil
}

func (l *loader) pattern(pr *Param, n *yaml.Node, what string) {
	v, ok := l.str(n, what+": pattern")
	if !ok {
		return
	}
	if pr.Type != nil && pr.Type.Kind != KindString {
		l.errorf(n, "%s: pattern applies to string parameters only", what)
		return
	}
	re, err := compilePattern(v)
	if err != nil {
		l.errorf(n, "%s: pattern %q: %v", what, v, err)
		return
	}
	pr.Pattern, pr.Regexp = v, re
}

// path decodes a path template. own are the parameters declared next to
// it, each of which must fill exactly one segment; outer is the enclosing
// group of a key's or lock's path.
func (l *loader) path(n *yaml.Node, what string, own []*Param, outer *Group) (out Path) {
	v, ok := l.str(n, what+": path")
	out = Path{Pos: l.pos(n)}
	if !ok {
		return out
	}
	if v == "" {
		l.errorf(n, "%s: path must not be empty", what)
		return out
	}
	used := map[string]bool{}
	before := len(l.errs)
	// A path with problems gets no segments, so that it takes no part in
	// the collision check and causes no follow-on errors.
	defer func() {
		if len(l.errs) > before {
			out.Segments = nil
		}
	}()
	for _, seg := range strings.Split(v, "/") {
		switch {
		case seg == "":
			l.errorf(n, "%s: path %q has an empty segment (leading, trailing or doubled '/')", what, v)
			return out
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") && strings.Count(seg, "{") == 1 && strings.Count(seg, "}") == 1:
			name := seg[1 : len(seg)-1]
			pr := findParam(own, name)
			switch {
			case pr != nil && used[name]:
				l.errorf(n, "%s: path %q uses parameter %q more than once", what, v, name)
			case pr != nil:
				used[name] = true
				out.Segments = append(out.Segments, Segment{Param: pr})
			case outer != nil && findParam(outer.Params, name) != nil:
				l.errorf(n, "%s: path %q: parameter %q belongs to group %s and is already in its path", what, v, name, outer.Name)
			default:
				l.errorf(n, "%s: path %q uses undeclared parameter %q", what, v, name)
			}
		case strings.ContainsAny(seg, "{}"):
			l.errorf(n, "%s: path segment %q: a parameter must fill a whole segment, like {id}", what, seg)
		case strings.IndexFunc(seg, isControl) >= 0:
			l.errorf(n, "%s: path segment %q holds a control character", what, seg)
		default:
			out.Segments = append(out.Segments, Segment{Literal: seg})
		}
	}
	for _, pr := range own {
		if !used[pr.Name] && len(l.errs) == before {
			l.errorf(n, "%s: parameter %q is declared but not used in path %q", what, pr.Name, v)
		}
	}
	return out
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

func findParam(ps []*Param, name string) *Param {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// guard resolves a key's guard: a lock of the key's group, else a
// top-level lock. The lock may not have parameters of its own, because
// the key's accessor has no values for them.
func (l *loader) guard(k *Key, n *yaml.Node) *Lock {
	what := "key " + k.QualifiedName()
	v, ok := l.str(n, what+": guard")
	if !ok {
		return nil
	}
	var lk *Lock
	if k.Group != nil {
		for _, x := range k.Group.Locks {
			if x.Name == v {
				lk = x
			}
		}
	}
	if lk == nil {
		for _, x := range l.s.Locks {
			if x.Name == v {
				lk = x
			}
		}
	}
	if lk == nil {
		var names []string
		if k.Group != nil {
			for _, x := range k.Group.Locks {
				names = append(names, x.Name)
			}
		}
		for _, x := range l.s.Locks {
			names = append(names, x.Name)
		}
		if k.Group != nil {
			l.errorf(n, "%s: guard %q: no lock %s in group %s or at the top level%s", what, v, v, k.Group.Name, suggest.DidYouMean(v, names))
		} else {
			l.errorf(n, "%s: guard %q: no top-level lock %s%s", what, v, v, suggest.DidYouMean(v, names))
		}
		return nil
	}
	if len(lk.Params) > 0 {
		l.errorf(n, "%s: guard %q: lock %s has parameters of its own, which the key cannot supply", what, v, lk.QualifiedName())
		return nil
	}
	return lk
}

// checkEncoding reports an encoding that cannot hold the key's type.
func (l *loader) checkEncoding(k *Key, encN *yaml.Node) {
	if fits(k.Encoding, k.Type) {
		return
	}
	what := "key " + k.QualifiedName()
	var want string
	switch k.Encoding {
	case EncodingBytes:
		want = "bytes holds only type bytes"
	default:
		want = "string holds only scalars: bool, numbers, string, time, duration, enums and go_types"
	}
	if encN != nil {
		l.errorf(encN, "%s: encoding %s does not fit type %s (%s)", what, k.Encoding, k.Type, want)
		return
	}
	p := k.Type.Pos
	l.errs.add(p, "%s: the default encoding %s does not fit type %s (%s); set encoding on the key", what, k.Encoding, k.Type, want)
}

// fits reports whether values of t can be stored with encoding e.
func fits(e Encoding, t *Type) bool {
	switch e {
	case EncodingBytes:
		return t.Kind == KindBytes
	case EncodingString:
		switch t.Kind {
		case KindBytes, KindList, KindMap, KindStruct:
			return false
		}
	}
	return true
}
