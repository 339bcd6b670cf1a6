package schemacheck

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

const transitionSchema = `version: 1
package: p
encoding: json
types:
  Mode:
    enum: [a, b]
  Inner:
    fields:
      at: {type: time, immutable: true}
      n: {type: int32, optional: true, monotonic: increasing}
  Rec:
    fields:
      id: {type: string, immutable: true}
      mode: {type: Mode, optional: true, immutable: true}
      blob: {type: bytes, optional: true, immutable: true}
      f: {type: float64, optional: true, monotonic: non_decreasing}
      u: {type: uint64, optional: true, monotonic: increasing}
      d: {type: duration, optional: true, monotonic: increasing}
      in: {type: Inner, optional: true}
      list: {type: "[]Inner", optional: true}
  Ver:
    version: 2
    fields:
      seq: {type: int64, monotonic: increasing}
    previous:
      1:
        fields:
          seq: int64
  Plain:
    fields:
      x: int64
keys:
  R: {path: r, type: Rec}
  V: {path: v, type: Ver}
  P: {path: p, type: Plain}
  L: {path: l, type: "[]Rec"}
groups:
  G:
    path: g/{name}
    params: {name: string}
    keys:
      R: {path: r, type: Rec}
`

func TestTransitionsJudgeEachRuleOnDecodedValues(t *testing.T) {
	sc, err := schema.Load("t.yaml", []byte(transitionSchema))
	if err != nil {
		t.Fatal(err)
	}
	judge := Transitions(sc)
	for _, c := range []struct {
		name, key, old, new string
		path, reason        string // "" when fine
	}{
		{"same", "r", `{"id":"x"}`, `{"id":"x"}`, "", ""},
		{"immutable string", "r", `{"id":"x"}`, `{"id":"y"}`, ".id", "immutable"},
		{"enum set from absent", "r", `{"id":"x"}`, `{"id":"x","mode":"a"}`, "", ""},
		{"enum changed", "r", `{"id":"x","mode":"a"}`, `{"id":"x","mode":"b"}`, ".mode", "immutable"},
		{"enum dropped", "r", `{"id":"x","mode":"a"}`, `{"id":"x"}`, ".mode", "immutable"},
		{"bytes same", "r", `{"id":"x","blob":"AQI="}`, `{"id":"x","blob":"AQI="}`, "", ""},
		{"bytes changed", "r", `{"id":"x","blob":"AQI="}`, `{"id":"x","blob":"AQM="}`, ".blob", "immutable"},
		{"float equal", "r", `{"id":"x","f":1.5}`, `{"id":"x","f":1.5}`, "", ""},
		{"float down", "r", `{"id":"x","f":1.5}`, `{"id":"x","f":1.25}`, ".f", "monotonic"},
		{"uint equal, increasing", "r", `{"id":"x","u":7}`, `{"id":"x","u":7}`, ".u", "monotonic"},
		{"uint up", "r", `{"id":"x","u":7}`, `{"id":"x","u":18446744073709551615}`, "", ""},
		{"duration up", "r", `{"id":"x","d":1000}`, `{"id":"x","d":2000}`, "", ""},
		{"duration equal", "r", `{"id":"x","d":1000}`, `{"id":"x","d":1000}`, ".d", "monotonic"},
		{"nested time same instant", "r", `{"id":"x","in":{"at":"2026-01-01T00:00:00Z"}}`, `{"id":"x","in":{"at":"2026-01-01T01:00:00+01:00"}}`, "", ""},
		{"nested time moved", "r", `{"id":"x","in":{"at":"2026-01-01T00:00:00Z"}}`, `{"id":"x","in":{"at":"2026-01-01T00:00:01Z"}}`, ".in.at", "immutable"},
		{"nested struct dropped", "r", `{"id":"x","in":{"at":"2026-01-01T00:00:00Z"}}`, `{"id":"x"}`, ".in.at", "immutable"},
		{"nested struct appears", "r", `{"id":"x"}`, `{"id":"x","in":{"at":"2026-01-01T00:00:00Z","n":-3}}`, "", ""},
		{"nested optional monotonic", "r", `{"id":"x","in":{"at":"2026-01-01T00:00:00Z","n":4}}`, `{"id":"x","in":{"at":"2026-01-01T00:00:00Z","n":3}}`, ".in.n", "monotonic"},
		{"list elements unchecked", "r", `{"id":"x","list":[{"at":"2026-01-01T00:00:00Z"}]}`, `{"id":"x","list":[{"at":"2027-01-01T00:00:00Z"}]}`, "", ""},
		{"old does not decode", "r", `not json`, `{"id":"y"}`, "", ""},
		{"versioned newest", "v", `{"$v":2,"seq":5}`, `{"$v":2,"seq":4}`, ".seq", "monotonic"},
		{"versioned older old", "v", `{"$v":1,"seq":5}`, `{"$v":2,"seq":4}`, "", ""},
		{"key not UTF-8", "g/\xff/r", `{"id":"x"}`, `{"id":"y"}`, ".id", "immutable"},
	} {
		version := hlc.HLC{Wall: uint64(len(c.name)), Node: c.name} // one value of the key per case
		t.Run(c.name, func(t *testing.T) {
			j := judge([]byte(c.key), []byte(c.new))
			if j == nil {
				t.Fatal("no judge for a key with rules")
			}
			p := judgeOld(t, j, []byte(c.old), version)
			switch {
			case c.path == "" && p != nil:
				t.Fatalf("%+v, want it to pass", p)
			case c.path != "" && (p == nil || p.Path != c.path || p.Reason != c.reason || p.Declaration != map[string]string{"r": "R", "v": "V", "g/\xff/r": "G.R"}[c.key] || p.Msg == ""):
				t.Fatalf("%+v, want path %s reason %s", p, c.path, c.reason)
			}
		})
	}
	// No judge (nothing decoded, nothing allocated per SET) for keys
	// without rules, undeclared keys, values that do not decode, lists.
	for _, kv := range [][2]string{{"p", `{"x":1}`}, {"nope", `{}`}, {"r", `not json`}, {"l", `[]`}, {"\xff", `{}`}} {
		if judge([]byte(kv[0]), []byte(kv[1])) != nil {
			t.Errorf("%q: a judge", kv[0])
		}
	}
}

// The judge runs on bytes any client wrote: whatever they hold, it
// answers without a panic, and a problem it reports names a path and a
// bounded message.
func FuzzTransitions(f *testing.F) {
	sc, err := schema.Load("t.yaml", []byte(transitionSchema))
	if err != nil {
		f.Fatal(err)
	}
	judge := Transitions(sc)
	f.Add("r", []byte(`{"id":"x","in":{"at":"2026-01-01T00:00:00Z","n":4}}`), []byte(`{"id":"y","f":"NaN"}`))
	f.Add("r", []byte(`{"id":"x","f":1e308,"d":-1}`), []byte(`{"id":"x","f":"-Inf","d":"x"}`))
	f.Add("v", []byte(`{"$v":2,"seq":5}`), []byte(`{"$v":2,"seq":-9223372036854775808}`))
	var n uint64
	f.Fuzz(func(t *testing.T, key string, old, new []byte) {
		j := judge([]byte(key), new)
		if j == nil {
			return
		}
		n++
		if p := judgeOld(t, j, old, hlc.HLC{Wall: n}); p != nil && (p.Path == "" || p.Msg == "" || len(p.Msg) > 400) {
			t.Fatalf("%+v", p)
		}
	})
}

// judgeOld judges old (the key's value at version) as the server does:
// inside the lock, and when that needs it, Learn outside it and again.
func judgeOld(t testing.TB, j *server.Transition, old []byte, version hlc.HLC) *server.WriteProblem {
	t.Helper()
	p, known := j.Judge(old, version)
	if !known {
		if len(old) <= maxLockedDecode {
			t.Fatalf("a value of %d bytes not judged inside the lock", len(old))
		}
		j.Learn(old, version)
		if p, known = j.Judge(old, version); !known {
			t.Fatal("not known after Learn")
		}
	}
	return p
}

// BenchmarkTransitions is the work --enforce adds to a SET of a key with
// rules (resolve, decode and project the new value outside the engine's
// lock; find the old one's projection, or decode a small one, and
// compare inside it), and to one without rules.
func BenchmarkTransitions(b *testing.B) {
	sc, err := schema.Load("t.yaml", []byte(transitionSchema))
	if err != nil {
		b.Fatal(err)
	}
	judge := Transitions(sc)
	old := []byte(`{"id":"x","f":1.5,"u":7,"in":{"at":"2026-01-01T00:00:00Z","n":4}}`)
	nw := []byte(`{"id":"x","f":1.5,"u":8,"in":{"at":"2026-01-01T00:00:00Z","n":5}}`)
	b.Run("rules/outside-lock", func(b *testing.B) {
		for b.Loop() {
			judge([]byte("r"), nw)
		}
	})
	j := judge([]byte("r"), nw)
	b.Run("rules/inside-lock/old-cached", func(b *testing.B) {
		v := hlc.HLC{Wall: 1}
		for b.Loop() {
			if p, _ := j.Judge(old, v); p != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("rules/inside-lock/old-uncached", func(b *testing.B) {
		var n uint64
		for b.Loop() {
			n++
			if p, _ := j.Judge(old, hlc.HLC{Wall: 2, Counter: n}); p != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("no-rules", func(b *testing.B) {
		for b.Loop() {
			judge([]byte("p"), []byte(`{"x":1}`))
		}
	})
}

// The cache of projections stays bounded in entries and bytes whatever
// clients write, and a projection is found only for the key, version and
// size it was made for.
func TestProjCacheIsBounded(t *testing.T) {
	var c projCache
	p := &projection{size: 100}
	for i := range 20000 {
		c.put(dk(fmt.Sprintf("k%d", i)), hlc.HLC{Wall: uint64(i)}, 10, p)
		if len(c.m) > maxCacheEntries || c.bytes > maxCacheBytes {
			t.Fatalf("%d entries, %d bytes", len(c.m), c.bytes)
		}
	}
	c.put(dk("big"), hlc.HLC{Wall: 1}, 10, &projection{size: maxCacheEntry + 1})
	if _, ok := c.get(dk("big"), hlc.HLC{Wall: 1}, 10); ok {
		t.Fatal("an entry over maxCacheEntry was kept")
	}
	for i := range 100 {
		c.put(dk("large"), hlc.HLC{Wall: uint64(i)}, 10, &projection{size: maxCacheEntry - 100})
		if len(c.m) > maxCacheEntries || c.bytes > maxCacheBytes {
			t.Fatalf("%d entries, %d bytes", len(c.m), c.bytes)
		}
	}
	c.put(dk("x"), hlc.HLC{Wall: 7}, 3, p)
	if got, ok := c.get(dk("x"), hlc.HLC{Wall: 7}, 3); !ok || got != p {
		t.Fatal("lost")
	}
	for _, miss := range []struct {
		key  string
		v    hlc.HLC
		size int
	}{{"y", hlc.HLC{Wall: 7}, 3}, {"x", hlc.HLC{Wall: 8}, 3}, {"x", hlc.HLC{Wall: 7, Node: "n"}, 3}, {"x", hlc.HLC{Wall: 7}, 4}} {
		if _, ok := c.get(dk(miss.key), miss.v, miss.size); ok {
			t.Fatalf("found for %+v", miss)
		}
	}
}

func dk(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// A Learn is never lost: the projection it made reaches its SET's Judge
// even when the cache cannot keep it (here: the cache is full of entries
// of other keys and the projection is pushed out by them at once, as a
// too-large one is never kept).
func TestLearnReachesJudgeWhenTheCacheDropsIt(t *testing.T) {
	sc, err := schema.Load("t.yaml", []byte(transitionSchema))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTransitions(sc)
	blob := `,"blob":"` + strings.Repeat("A", 2*maxLockedDecode) + `"}`
	old := []byte(`{"id":"a"` + blob)
	j := tr.check([]byte("r"), []byte(`{"id":"b"`+blob))
	if _, known := j.Judge(old, hlc.HLC{Wall: 1}); known {
		t.Fatal("a large value judged inside the lock")
	}
	j.Learn(old, hlc.HLC{Wall: 1})
	tr.cache.mu.Lock()
	clear(tr.cache.m)
	tr.cache.bytes = 0
	tr.cache.mu.Unlock()
	if p, known := j.Judge(old, hlc.HLC{Wall: 1}); !known || p == nil || p.Reason != "immutable" {
		t.Fatalf("%+v, %v", p, known)
	}
	if _, known := j.Judge(old, hlc.HLC{Wall: 2}); known {
		t.Fatal("judged another version on what was learned")
	}
}

// A long immutable string or bytes is kept as a digest: compared whole,
// shown in part, and the projection stays small.
func TestProjectionKeepsLongValuesAsDigests(t *testing.T) {
	sc, err := schema.Load("t.yaml", []byte(transitionSchema))
	if err != nil {
		t.Fatal(err)
	}
	judge := Transitions(sc)
	long := strings.Repeat("a", 1<<20)
	old := []byte(`{"id":"` + long + `"}`)
	for i, c := range []struct {
		id   string
		fine bool
	}{{long, true}, {long[1:] + "b", false}, {long[1:], false}, {"a", false}} {
		j := judge([]byte("r"), []byte(`{"id":"`+c.id+`"}`))
		p := judgeOld(t, j, old, hlc.HLC{Wall: 1})
		if (p == nil) != c.fine || p != nil && len(p.Msg) > 200 {
			t.Fatalf("case %d: %+v", i, p)
		}
	}
	var rec *schema.TypeDef
	for _, d := range sc.Types {
		if d.Name == "Rec" {
			rec = d
		}
	}
	pr := newTransitions(sc).projectBytes(schemavalCodec(sc, "R"), rec, appendRules(nil, rec, ""), old)
	if pr.size > 1024 {
		t.Fatalf("projection of %d bytes", pr.size)
	}
}

func schemavalCodec(sc *schema.Schema, key string) *schemaval.Codec {
	for _, k := range sc.AllKeys() {
		if k.Name == key {
			return schemaval.ForKey(k)
		}
	}
	return nil
}
