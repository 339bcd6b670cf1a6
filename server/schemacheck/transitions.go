package schemacheck

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// Transitions returns the transition check of sc for
// server.Options.TransitionCheck: for a SET to a key whose declared type
// is a struct with transition rules (immutable, monotonic, also in the
// structs of its struct fields), a judge of the value it replaces, as
// the generated read-modify-write paths judge it (docs/schema.md,
// Transition rules). A field absent before may be set to anything; a
// field present before must stay present. Rules inside list and map
// elements are not checked. Of a versioned type, only values of its
// newest version are compared (converting an older one takes the user's
// Go code). A stored value that does not decode has no rules to keep.
// Problems carry Reason "immutable" or "monotonic" and the field path.
//
// The judge runs inside the engine's lock, so it never decodes a value
// over maxLockedDecode bytes there: it compares projections (the values
// of the rule fields only), and finds the replaced value's projection by
// the key's digest and version in a bounded cache, where Stored put it
// when the value was written through the check; a larger value not in it
// is decoded by Learn, outside the lock, and what Learn made is judged
// on when the SET is decided again, cached or not. Safe for concurrent
// use.
func Transitions(sc *schema.Schema) func(key, value []byte) *server.Transition {
	return newTransitions(sc).check
}

// transitions is the state of a Transitions check.
type transitions struct {
	r     *schemaval.Resolver
	rules sync.Map // *schema.TypeDef -> []rule
	cache projCache
	// learn lets one Learn decode at a time: a decode can take many
	// times the size of the value in memory.
	learn sync.Mutex
	// lockedDecodes and learnedDecodes count the replaced values decoded
	// inside the engine's lock (each at most maxLockedDecode bytes) and
	// by Learn, for tests.
	lockedDecodes, learnedDecodes atomic.Int64
}

// maxLockedDecode is the largest replaced value the judge decodes
// inside the engine's lock when its projection is not cached.
const maxLockedDecode = 4 << 10

func newTransitions(sc *schema.Schema) *transitions {
	return &transitions{r: schemaval.NewResolver(sc)}
}

func (t *transitions) check(key, value []byte) *server.Transition {
	m, ok := t.r.Resolve(string(key))
	if !ok || m.Key == nil || m.Codec() == nil {
		return nil
	}
	typ := m.Key.Type
	if typ.Kind != schema.KindStruct || !typ.Def.HasTransitionRules() {
		return nil
	}
	c := m.Codec()
	nv, err := c.Decode(value)
	if err != nil {
		return nil // WriteCheck reports it
	}
	def := typ.Def
	rules := t.rulesOf(def)
	n := project(def, rules, nv)
	decl := m.Name()
	k := sha256.Sum256(key)
	// learned is what Learn decoded for this SET: Judge finds it even
	// when the cache could not keep it (an entry too large) or pushed it
	// out meanwhile, so a Learn is never lost. Judge and Learn of one
	// SET run one after the other (the engine's lock orders them).
	var learned struct {
		ok      bool
		version hlc.HLC
		size    int
		p       *projection
	}
	return &server.Transition{
		Declaration: decl,
		// Inside the engine's lock.
		Judge: func(old []byte, version hlc.HLC) (*server.WriteProblem, bool) {
			var o *projection
			if learned.ok && learned.version == version && learned.size == len(old) {
				o = learned.p
			} else if o, ok = t.cache.get(k, version, len(old)); !ok {
				if len(old) > maxLockedDecode {
					return nil, false
				}
				t.lockedDecodes.Add(1)
				o = t.projectBytes(c, def, rules, old)
				t.cache.put(k, version, len(old), o)
			}
			p := judge(def, rules, o, n)
			if p != nil {
				p.Declaration = decl
			}
			return p, true
		},
		// Outside it.
		Learn: func(old []byte, version hlc.HLC) {
			t.learn.Lock()
			defer t.learn.Unlock()
			o, ok := t.cache.get(k, version, len(old))
			if !ok {
				t.learnedDecodes.Add(1)
				o = t.projectBytes(c, def, rules, old)
				t.cache.put(k, version, len(old), o)
			}
			learned.ok, learned.version, learned.size, learned.p = true, version, len(old), o
		},
		// Outside it: the new value is the key's now.
		Stored: func(version hlc.HLC) {
			t.cache.put(k, version, len(value), n)
		},
	}
}

// rule is a field with a transition rule, at path in a declared struct
// (in a struct field, recursively).
type rule struct {
	path  string
	field *schema.Field
}

func (t *transitions) rulesOf(def *schema.TypeDef) []rule {
	if r, ok := t.rules.Load(def); ok {
		return r.([]rule)
	}
	r := appendRules(nil, def, "")
	t.rules.Store(def, r)
	return r
}

func appendRules(out []rule, def *schema.TypeDef, path string) []rule {
	for _, f := range def.Fields {
		fp := path + "." + f.Name
		switch {
		case f.HasRules():
			out = append(out, rule{fp, f})
		case f.Type.Kind == schema.KindStruct && f.Type.Def.HasTransitionRules():
			out = appendRules(out, f.Type.Def, fp)
		}
	}
	return out
}

// projection is what the rules need of a value: its version stamp and
// the value of each rule field (in rules' order), in a form to compare
// (see compareForm) and a form to show. A field in an absent struct is
// absent. Its size does not grow with the value's: long strings and
// bytes are kept as a digest.
type projection struct {
	decoded bool // false: the value does not decode, it has no rules to keep
	stamp   int
	vals    []projected
	size    int
}

type projected struct {
	has   bool
	v     any
	shown string
}

func (t *transitions) projectBytes(c *schemaval.Codec, def *schema.TypeDef, rules []rule, b []byte) *projection {
	v, err := c.Decode(b)
	if err != nil {
		return &projection{}
	}
	return project(def, rules, v)
}

func project(def *schema.TypeDef, rules []rule, v any) *projection {
	o, _ := v.(schemaval.Object)
	p := &projection{decoded: true, stamp: stamp(o), vals: make([]projected, 0, len(rules))}
	p.vals = appendProjected(p.vals, def, o, true)
	p.size = 64
	for _, x := range p.vals {
		p.size += 48 + len(x.shown)
		if s, ok := x.v.(string); ok {
			p.size += len(s)
		}
	}
	return p
}

// appendProjected walks def as appendRules does.
func appendProjected(out []projected, def *schema.TypeDef, o schemaval.Object, oOK bool) []projected {
	for _, f := range def.Fields {
		var v any
		has := false
		if oOK {
			v, has = o.Get(f.Name)
		}
		switch {
		case f.HasRules():
			if has {
				out = append(out, projected{true, compareForm(f.Type.Kind, v), show(v)})
			} else {
				out = append(out, projected{})
			}
		case f.Type.Kind == schema.KindStruct && f.Type.Def.HasTransitionRules():
			oo, _ := v.(schemaval.Object)
			out = appendProjected(out, f.Type.Def, oo, has)
		}
	}
	return out
}

// unordered stands for a value with no order and no equal (a NaN, a
// time that does not parse).
type unordered struct{}

// digest stands for a string or bytes over maxKept bytes.
type digest [sha256.Size]byte

// maxKept is the longest string or bytes a projection keeps as is.
const maxKept = 64

// compareForm is a decoded value of kind k (schemaval.Decode's forms) in
// the form judge compares: time.Time, time.Duration, float64, int64,
// uint64, bool, a string (of at most maxKept bytes), a digest or
// unordered.
func compareForm(k schema.Kind, v any) any {
	switch k {
	case schema.KindTime:
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return unordered{}
		}
		return t
	case schema.KindDuration:
		s, _ := v.(string)
		d, err := time.ParseDuration(s)
		if err != nil {
			return unordered{}
		}
		return d
	case schema.KindFloat32, schema.KindFloat64:
		f, ok := float(v)
		if !ok || math.IsNaN(f) {
			return unordered{}
		}
		return f
	}
	switch x := v.(type) {
	case []byte:
		return kept(string(x))
	case string:
		return kept(x)
	case bool, int, int64, uint64:
		return v
	}
	return unordered{} // no other form is expected; never compare what == cannot
}

func kept(s string) any {
	if len(s) <= maxKept {
		return s
	}
	return digest(sha256.Sum256([]byte(s)))
}

func stamp(o schemaval.Object) int {
	v, _ := o.Get(codec.VersionField)
	n, _ := v.(int)
	return n
}

// judge compares the projections o (the value replaced) and n.
func judge(def *schema.TypeDef, rules []rule, o, n *projection) *server.WriteProblem {
	if !o.decoded || def.Version > 0 && (o.stamp != def.Version || n.stamp != def.Version) {
		return nil
	}
	for i, r := range rules {
		ov, nv := o.vals[i], n.vals[i]
		if !ov.has {
			continue
		}
		f := r.field
		switch {
		case f.Immutable:
			if !nv.has {
				return problem("immutable", r.path, "immutable field dropped (was %s)", ov.shown)
			}
			if !sameValue(ov.v, nv.v) {
				return problem("immutable", r.path, "immutable field changed from %s to %s", ov.shown, nv.shown)
			}
		default:
			if !nv.has {
				return problem("monotonic", r.path, "monotonic (%s) field dropped (was %s)", string(f.Monotonic), ov.shown)
			}
			c, ok := order(nv.v, ov.v)
			if !ok || c < 0 || c == 0 && f.Monotonic == schema.MonotonicIncreasing {
				return problem("monotonic", r.path, "monotonic (%s) field moved from %s to %s", string(f.Monotonic), ov.shown, nv.shown)
			}
		}
	}
	return nil
}

// projCache keeps the projections of values replaced, by the SHA-256 of
// the key, version (a version names one value of a key) and size: an
// entry's cost does not depend on the key's length, and a client cannot
// make two keys share an entry. Bounded in entries and bytes: when full,
// an arbitrary entry makes room; an entry over maxCacheEntry is not kept
// (the Learn that made it still hands it to its SET's Judge).
type projCache struct {
	mu    sync.Mutex
	m     map[projKey]*projection
	bytes int
}

type projKey struct {
	key     [sha256.Size]byte
	version hlc.HLC
	size    int
}

const (
	maxCacheBytes   = 4 << 20
	maxCacheEntries = 8192
	// maxCacheEntry is the largest entry kept (a key digest, version and
	// projection).
	maxCacheEntry = 64 << 10
)

func (c *projCache) get(key [sha256.Size]byte, version hlc.HLC, size int) (*projection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[projKey{key, version, size}]
	return p, ok
}

func (c *projCache) put(key [sha256.Size]byte, version hlc.HLC, size int, p *projection) {
	cost := entryCost(version, p)
	if cost > maxCacheEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := projKey{key, version, size}
	if _, ok := c.m[k]; ok {
		return
	}
	if c.m == nil {
		c.m = make(map[projKey]*projection)
	}
	for len(c.m) > 0 && (len(c.m) >= maxCacheEntries || c.bytes+cost > maxCacheBytes) {
		for old, op := range c.m {
			c.bytes -= entryCost(old.version, op)
			delete(c.m, old)
			break
		}
	}
	c.m[k] = p
	c.bytes += cost
}

// entryCost is what an entry of the cache is counted for.
func entryCost(version hlc.HLC, p *projection) int {
	return sha256.Size + len(version.Node) + p.size
}

// maxShown bounds a value in a message: values come from any client.
const maxShown = 64

// problem formats shown values (show's) and rule names.
func problem(reason, path, format string, vals ...any) *server.WriteProblem {
	return &server.WriteProblem{Path: path, Reason: reason, Msg: fmt.Sprintf(format, vals...)}
}

// show is v in a message, at most maxShown bytes and a "…": only the
// first bytes of a long value are formatted.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case []byte:
		s = fmt.Sprintf("%x", x[:min(len(x), maxShown/2+1)])
	case string:
		s = fmt.Sprintf("%q", x[:min(len(x), maxShown+1)])
	default:
		s = fmt.Sprint(x)
	}
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// sameValue compares two values in compareForm's form.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case unordered:
		return false
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return a == b
}

// order compares two numbers, times or durations in compareForm's form;
// false when they have no order.
func order(a, b any) (int, bool) {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return x.Compare(y), ok
	case time.Duration:
		y, ok := b.(time.Duration)
		return cmp.Compare(x, y), ok
	case float64:
		y, ok := b.(float64)
		return cmp.Compare(x, y), ok
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case uint64:
		y, ok := b.(uint64)
		return cmp.Compare(x, y), ok
	}
	return 0, false
}

// float reads a decoded float (schemaval.Decode's forms).
func float(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case string:
		switch x {
		case "+Inf":
			return math.Inf(1), true
		case "-Inf":
			return math.Inf(-1), true
		case "NaN":
			return math.NaN(), true
		}
	}
	return 0, false
}
