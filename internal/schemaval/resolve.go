package schemaval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ssgen/ssgen/schema"
)

// Resolver finds the declared key or lock a concrete key is. Make one
// with NewResolver; it is immutable and safe for concurrent use.
type Resolver struct {
	// bySegments holds the declarations by their number of path
	// segments, the first thing a key must match.
	bySegments map[int][]decl
	all        []decl // in declaration order, keys then locks
}

type decl struct {
	key     *schema.Key
	lock    *schema.Lock
	path    schema.Path
	params  []*schema.Param
	codec   *Codec
	earlier bool // path is the key's earlier one (renamed_from)
}

// NewResolver indexes the keys and locks of s.
func NewResolver(s *schema.Schema) *Resolver {
	r := &Resolver{bySegments: map[int][]decl{}}
	add := func(d decl) {
		n := len(d.path.Segments)
		r.bySegments[n] = append(r.bySegments[n], d)
		r.all = append(r.all, d)
	}
	for _, k := range s.AllKeys() {
		add(decl{key: k, path: k.FullPath(), params: k.AllParams(), codec: ForKey(k)})
	}
	for _, l := range s.AllLocks() {
		add(decl{lock: l, path: l.FullPath(), params: l.AllParams()})
	}
	// A moved key's earlier path names the key too: its values are the
	// key's, stored before the move (Load refuses an earlier path that
	// meets a current one).
	for _, k := range s.AllKeys() {
		for _, p := range k.FullMovedFroms() {
			add(decl{key: k, path: p, params: k.AllParams(), codec: ForKey(k), earlier: true})
		}
	}
	return r
}

// Match is a concrete key read as a declaration of the schema.
type Match struct {
	// Key is the declared key, or nil when the key is a lock.
	Key *schema.Key
	// Lock is the declared lock, or nil when the key is a key.
	Lock *schema.Lock
	// Params are the parameter values the key holds, in the order of the
	// accessor's arguments (the group's, then the key's own).
	Params []Param
	// Earlier reports that the key is the declared key's earlier name
	// (renamed_from), where values written before the move stay until
	// the key is next written.
	Earlier bool

	codec *Codec
}

// Param is one parameter value of a Match.
type Param struct {
	Param *schema.Param
	// Value is the typed value: a string (string and enum parameters),
	// an int64 or a uint64.
	Value any
	// Text is the value as the key spells it.
	Text string
}

// Name is the declaration's qualified name: "Group.Key", "Key",
// "Group.Lock" or "Lock".
func (m *Match) Name() string {
	if m.Lock != nil {
		return m.Lock.QualifiedName()
	}
	return m.Key.QualifiedName()
}

// Codec is the codec of the key's values; nil for a lock, whose value is
// the holder's id (plain bytes, not typed).
func (m *Match) Codec() *Codec { return m.codec }

// ParamMap returns the parameter values by name.
func (m *Match) ParamMap() map[string]any {
	out := make(map[string]any, len(m.Params))
	for _, p := range m.Params {
		out[p.Param.Name] = p.Value
	}
	return out
}

// GuardKey returns the concrete key of the lock that guards this key, and
// the lock, or "" and nil when the key has no guard. The guard is a lock
// of the key's group (so it takes the group's parameter values from this
// key) or a top-level lock.
func (m *Match) GuardKey() (string, *schema.Lock) {
	if m.Key == nil || m.Key.Guard == nil {
		return "", nil
	}
	values := make(map[*schema.Param]string, len(m.Params))
	for _, p := range m.Params {
		values[p.Param] = p.Text
	}
	return Render(m.Key.Guard.FullPath(), values), m.Key.Guard
}

// Guard is the guard lock of one concrete key: the lock's concrete key
// and its declaration. Every tool that writes a guarded key without
// generated code (ssgen set and del, the web console) takes this lock,
// writes with its fencing token and releases it, and words its refusals
// with Describe and HeldBy.
type Guard struct {
	Key  string
	Lock *schema.Lock
}

// Guard returns the key's guard; ok is false when the key has none.
func (m *Match) Guard() (g Guard, ok bool) {
	g.Key, g.Lock = m.GuardKey()
	return g, g.Lock != nil
}

// Describe says that subject (the guarded key, as the caller names it)
// is guarded by this lock.
func (g Guard) Describe(subject string) string {
	return fmt.Sprintf("%s is guarded by lock %s (%q)", subject, g.Lock.QualifiedName(), g.Key)
}

// HeldBy says that the lock is taken, and by which holder when known
// (holder is the lock key's value, bounded here since others write it).
func (g Guard) HeldBy(subject string, holder []byte, known bool) string {
	if !known {
		return g.Describe(subject) + ", held by someone else"
	}
	const maxHolder = 200
	if len(holder) > maxHolder {
		holder = holder[:maxHolder]
	}
	return fmt.Sprintf("%s, held by %q", g.Describe(subject), holder)
}

// Render spells a path with the given parameter values (as text).
func Render(p schema.Path, values map[*schema.Param]string) string {
	var b strings.Builder
	for i, s := range p.Segments {
		if i > 0 {
			b.WriteByte('/')
		}
		if s.Param != nil {
			b.WriteString(values[s.Param])
		} else {
			b.WriteString(s.Literal)
		}
	}
	return b.String()
}

// Resolve returns the declaration key is, with its parameter values, or
// false when it is none. A parameter value must be one the generated
// accessor could have rendered: a string non-empty and matching its
// pattern, an enum one of its values, an integer in canonical decimal
// (no sign or leading zero it would not write) within its type's range.
// A schema that loaded declares no two paths that can render the same
// key, so at most one declaration matches.
func (r *Resolver) Resolve(key string) (*Match, bool) {
	segs := strings.Split(key, "/")
	for _, d := range r.bySegments[len(segs)] {
		if m, ok := d.match(segs); ok {
			return m, true
		}
	}
	return nil, false
}

func (d *decl) match(segs []string) (*Match, bool) {
	var params []Param
	for i, s := range d.path.Segments {
		if s.Param == nil {
			if segs[i] != s.Literal {
				return nil, false
			}
			continue
		}
		v, ok := ParseParam(s.Param, segs[i])
		if !ok {
			return nil, false
		}
		params = append(params, Param{Param: s.Param, Value: v, Text: segs[i]})
	}
	// Path order to argument order.
	ordered := make([]Param, 0, len(params))
	for _, p := range d.params {
		for _, q := range params {
			if q.Param == p {
				ordered = append(ordered, q)
			}
		}
	}
	return &Match{Key: d.key, Lock: d.lock, Params: ordered, codec: d.codec, Earlier: d.earlier}, true
}

// ParseParam reads one path segment as a value of parameter p, accepting
// exactly what a generated accessor renders; see Resolver.Resolve.
func ParseParam(p *schema.Param, seg string) (any, bool) {
	if seg == "" || strings.Contains(seg, "/") {
		return nil, false
	}
	k := p.Type.Kind
	switch {
	case k == schema.KindString:
		if p.Regexp != nil && !p.Regexp.MatchString(seg) {
			return nil, false
		}
		return seg, true
	case k == schema.KindEnum:
		return seg, declared(p.Type.Def, seg)
	case k.IsSigned():
		n, err := strconv.ParseInt(seg, 10, intBits(k))
		if err != nil || strconv.FormatInt(n, 10) != seg {
			return nil, false
		}
		return n, true
	case k.IsInteger():
		n, err := strconv.ParseUint(seg, 10, intBits(k))
		if err != nil || strconv.FormatUint(n, 10) != seg {
			return nil, false
		}
		return n, true
	}
	return nil, false
}

// MovedFrom returns the earlier key of a declared key that moved
// (renamed_from), with this match's parameter values, or "" when it did
// not move or the match is the earlier key: the first key generated code
// reads while this one is absent.
func (m *Match) MovedFrom() string {
	if ks := m.EarlierKeys(); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// EarlierKeys returns the earlier keys of a declared key that moved
// (renamed_from), with this match's parameter values, in the order reads
// fall back to them; nil when it did not move or the match is an earlier
// key. Every write of the key, by generated code, ssgen set and the
// console, deletes them after it (fenced like the write), and a delete
// removes them with the key.
func (m *Match) EarlierKeys() []string {
	if m.Key == nil || !m.Key.Moved() || m.Earlier {
		return nil
	}
	values := m.values()
	var out []string
	for _, p := range m.Key.FullMovedFroms() {
		out = append(out, Render(p, values))
	}
	return out
}

// CurrentKey returns the key this match names today: for a match of an
// earlier path, the key it moved to, with the same parameter values.
func (m *Match) CurrentKey() string {
	if m.Key != nil {
		return Render(m.Key.FullPath(), m.values())
	}
	return Render(m.Lock.FullPath(), m.values())
}

func (m *Match) values() map[*schema.Param]string {
	values := make(map[*schema.Param]string, len(m.Params))
	for _, p := range m.Params {
		values[p.Param] = p.Text
	}
	return values
}
