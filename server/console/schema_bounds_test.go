package console_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server/console"
)

const boundsSchema = `
version: 1
package: p
types:
  Node:
    fields:
      name: {type: string, default: n}
      kids: {type: "[]Node", renamed_from: children}
  Big:
    fields:
      list: {type: "[]int", default: [1, 2, 3]}
      map: {type: "map[string]int", default: {a: 1}}
      name: {type: string, default: x}
keys:
  Tree: {path: tree, type: Node}
  Bigs: {path: bigs, type: "[]Big"}
  Durations: {path: durs, type: "[][][][]duration"}
`

// TestSchemaViewIsBounded: issue #27's attacks on the console's view of a
// declared key. A recursive value nested three million levels deep (21
// MB) overflowed serve's stack when viewed; a 1 MB list of empty maps,
// each lacking three defaults, took 33 s and 7 GB. Each view is now
// answered at once, with the reason the value is not decoded.
func TestSchemaViewIsBounded(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(boundsSchema))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	level := []byte("\x81\xa4kids\x91")
	bigList := func(n int) string {
		return string(append([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte{0x80}, n)...))
	}
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"3,000,000 levels", "tree", string(append(bytes.Repeat(level, 3_000_000), 0x80)), "not decoded"},
		{"9,000 levels", "tree", string(append(bytes.Repeat(level, 9_000), 0x80)), "nested too deep"},
		{"1,000,000 empty maps", "bigs", bigList(1_000_000), "not decoded"},
		{"60,000 empty maps", "bigs", bigList(60_000), "upgrade limit"},
		// 65,008 bytes whose indented JSON is 1.1 MB: one byte, one line.
		{"65,000 durations", "durs", "\x91\x91\x91\xdd\x00\x00\xfd\xe8" + strings.Repeat("\x7f", 65_000), "more than the 1048576 the console shows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.put(tc.key, tc.value)
			var d map[string]any
			e.getJSON("/api/key?key="+tc.key, &d)
			sc, _ := d["schema"].(map[string]any)
			if msg, _ := sc["error"].(string); !strings.Contains(msg, tc.want) || sc["json"] != nil {
				t.Fatalf("schema view: %v, want an error saying %q", sc, tc.want)
			}
		})
	}
	// A value within the bounds still decodes, earlier names and all.
	e.put("tree", "\x81\xa8children\x91\x80")
	var d map[string]any
	e.getJSON("/api/key?key=tree", &d)
	sc, _ := d["schema"].(map[string]any)
	if js, _ := sc["json"].(string); !strings.Contains(js, `"kids"`) || !strings.Contains(js, `"n"`) {
		t.Fatalf("a small value: %v", sc)
	}
}
