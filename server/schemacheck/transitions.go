package schemacheck

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
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
// Safe for concurrent use.
func Transitions(sc *schema.Schema) func(key, value []byte) func(old []byte) *server.WriteProblem {
	r := schemaval.NewResolver(sc)
	recent := &decodedCache{}
	return func(key, value []byte) func(old []byte) *server.WriteProblem {
		if !utf8.Valid(key) {
			return nil
		}
		m, ok := r.Resolve(string(key))
		if !ok || m.Key == nil || m.Codec() == nil {
			return nil
		}
		t := m.Key.Type
		if t.Kind != schema.KindStruct || !t.Def.HasTransitionRules() {
			return nil
		}
		c := m.Codec()
		nv, err := c.Decode(value)
		if err != nil {
			return nil // WriteCheck reports it
		}
		recent.put(c, value, nv)
		decl := m.Name()
		return func(old []byte) *server.WriteProblem {
			// Inside the engine's lock: the value replaced is most often
			// one this check decoded as a new value, outside it.
			ov, ok := recent.get(c, old)
			if !ok {
				if ov, err = c.Decode(old); err != nil {
					return nil
				}
			}
			o, _ := ov.(schemaval.Object)
			n, _ := nv.(schemaval.Object)
			if t.Def.Version > 0 && (stamp(o) != t.Def.Version || stamp(n) != t.Def.Version) {
				return nil
			}
			p := judgeStruct(t.Def, "", o, true, n, true)
			if p != nil {
				p.Declaration = decl
			}
			return p
		}
	}
}

// decodedCache keeps the decoded form of recent new values, so that the
// judge, which runs inside the engine's lock, seldom decodes the value a
// SET replaces: that is usually the one an earlier SET wrote. Bounded:
// values over maxCachedValue bytes are not kept, and it starts over once
// it holds maxCacheBytes or maxCacheEntries. Decoded values are only read, never changed.
type decodedCache struct {
	mu    sync.Mutex
	m     map[cacheKey]any
	bytes int
}

type cacheKey struct {
	c *schemaval.Codec
	b string
}

const (
	maxCachedValue  = 4 << 10
	maxCacheBytes   = 1 << 20
	maxCacheEntries = 1024
)

func (d *decodedCache) get(c *schemaval.Codec, b []byte) (any, bool) {
	if len(b) > maxCachedValue {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.m[cacheKey{c, string(b)}]
	return v, ok
}

func (d *decodedCache) put(c *schemaval.Codec, b []byte, v any) {
	if len(b) > maxCachedValue {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := cacheKey{c, string(b)}
	if _, ok := d.m[k]; ok {
		return
	}
	if d.m == nil || d.bytes+len(b) > maxCacheBytes || len(d.m) >= maxCacheEntries {
		d.m, d.bytes = make(map[cacheKey]any), 0
	}
	d.m[k] = v
	d.bytes += len(b)
}

func stamp(o schemaval.Object) int {
	v, _ := o.Get(codec.VersionField)
	n, _ := v.(int)
	return n
}

// judgeStruct compares the fields of def with rules in o and n (each
// absent when its flag is false: a struct on the path is absent).
func judgeStruct(def *schema.TypeDef, path string, o schemaval.Object, oOK bool, n schemaval.Object, nOK bool) *server.WriteProblem {
	if !oOK {
		return nil
	}
	for _, f := range def.Fields {
		fp := path + "." + f.Name
		ov, ohas := o.Get(f.Name)
		var nv any
		nhas := false
		if nOK {
			nv, nhas = n.Get(f.Name)
		}
		switch {
		case f.Immutable:
			if !ohas {
				continue
			}
			if !nhas {
				return problem("immutable", fp, "immutable field dropped (was %s)", ov)
			}
			if !sameValue(f.Type.Kind, ov, nv) {
				return problem("immutable", fp, "immutable field changed from %s to %s", ov, nv)
			}
		case f.Monotonic != "":
			if !ohas {
				continue
			}
			if !nhas {
				return problem("monotonic", fp, "monotonic (%s) field dropped (was %s)", f.Monotonic, ov)
			}
			c, ok := order(f.Type.Kind, nv, ov)
			if !ok || c < 0 || c == 0 && f.Monotonic == schema.MonotonicIncreasing {
				return problem("monotonic", fp, "monotonic (%s) field moved from %s to %s", f.Monotonic, ov, nv)
			}
		case f.Type.Kind == schema.KindStruct && f.Type.Def.HasTransitionRules():
			oo, _ := ov.(schemaval.Object)
			no, _ := nv.(schemaval.Object)
			if p := judgeStruct(f.Type.Def, fp, oo, ohas, no, nhas); p != nil {
				return p
			}
		}
	}
	return nil
}

// maxShown bounds a value in a message: values come from any client.
const maxShown = 64

func problem(reason, path, format string, vals ...any) *server.WriteProblem {
	shown := make([]any, len(vals))
	for i, v := range vals {
		shown[i] = show(v)
	}
	return &server.WriteProblem{Path: path, Reason: reason, Msg: fmt.Sprintf(format, shown...)}
}

func show(v any) string {
	var s string
	switch x := v.(type) {
	case []byte:
		s = fmt.Sprintf("%x", x)
	case string:
		s = fmt.Sprintf("%q", x)
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

// sameValue compares two decoded values of kind k (schemaval.Decode's
// forms).
func sameValue(k schema.Kind, a, b any) bool {
	switch k {
	case schema.KindBytes:
		ab, _ := a.([]byte)
		bb, _ := b.([]byte)
		return bytes.Equal(ab, bb)
	case schema.KindTime, schema.KindDuration:
		c, ok := order(k, a, b)
		return ok && c == 0
	case schema.KindFloat32, schema.KindFloat64:
		c, ok := order(k, a, b)
		return ok && c == 0
	}
	return a == b
}

// order compares two decoded numbers, times or durations; false when
// they have no order (a NaN, a value of an unexpected form).
func order(k schema.Kind, a, b any) (int, bool) {
	switch k {
	case schema.KindTime:
		as, _ := a.(string)
		bs, _ := b.(string)
		at, aerr := time.Parse(time.RFC3339Nano, as)
		bt, berr := time.Parse(time.RFC3339Nano, bs)
		if aerr != nil || berr != nil {
			return 0, false
		}
		return at.Compare(bt), true
	case schema.KindDuration:
		as, _ := a.(string)
		bs, _ := b.(string)
		ad, aerr := time.ParseDuration(as)
		bd, berr := time.ParseDuration(bs)
		if aerr != nil || berr != nil {
			return 0, false
		}
		return cmp.Compare(ad, bd), true
	case schema.KindFloat32, schema.KindFloat64:
		af, aok := float(a)
		bf, bok := float(b)
		if !aok || !bok || math.IsNaN(af) || math.IsNaN(bf) {
			return 0, false
		}
		return cmp.Compare(af, bf), true
	}
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case uint64:
		y, ok := b.(uint64)
		return cmp.Compare(x, y), ok
	}
	return 0, false
}

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
