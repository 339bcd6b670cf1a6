package templates_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/templates"
)

// bigSchema declares 1,000 keys: 100 groups of 10, each key of a struct
// type, a scalar, a TTL or a guard, so every emitter is exercised.
func bigSchema() []byte {
	var b strings.Builder
	b.WriteString("version: 1\npackage: big\ntypes:\n  Mode:\n    enum: [a, b, c]\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  Value%d:\n    fields:\n      n: int64\n      s: {type: string, optional: true}\n      m: Mode\n      l: \"[]float64\"\n", i)
	}
	b.WriteString("groups:\n")
	for g := range 100 {
		fmt.Fprintf(&b, "  Group%d:\n    path: g%d/{id}/{n}\n    params:\n      id: {type: string, pattern: \"[a-z]+\"}\n      n: int\n    locks:\n      Owner: {path: owner, ttl: 10s}\n    keys:\n", g, g)
		for k := range 10 {
			fmt.Fprintf(&b, "      Key%d:\n        path: k%d\n", k, k)
			switch k % 4 {
			case 0:
				fmt.Fprintf(&b, "        type: Value%d\n        guard: Owner\n", (g+k)%20)
			case 1:
				b.WriteString("        type: float64\n        encoding: string\n        ttl: 30s\n")
			case 2:
				b.WriteString("        type: Mode\n        encoding: json\n")
			default:
				fmt.Fprintf(&b, "        type: \"map[string]Value%d\"\n", k%20)
			}
		}
	}
	return []byte(b.String())
}

func loadBig(tb testing.TB) *schema.Schema {
	tb.Helper()
	s, err := schema.Load("big.yaml", bigSchema())
	if err != nil {
		tb.Fatal(err)
	}
	if n := len(s.AllKeys()); n != 1000 {
		tb.Fatalf("%d keys, want 1000", n)
	}
	return s
}

func TestAThousandKeySchemaGenerates(t *testing.T) {
	if testing.Short() {
		t.Skip("large schema")
	}
	s := loadBig(t)
	files, err := templates.Generate(s, templates.Options{Source: "big.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(string(files[0].Content), "*runtime.Key["); c < 1000 {
		t.Fatalf("%d key accessors, want 1000", c)
	}
}

// BenchmarkGenerate1000Keys measures schema.Load plus Generate (the whole
// of "ssgen generate" but the file writes) for a 1,000-key schema.
func BenchmarkGenerate1000Keys(b *testing.B) {
	src := bigSchema()
	for b.Loop() {
		s, err := schema.Load("big.yaml", src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := templates.Generate(s, templates.Options{Source: "big.yaml"}); err != nil {
			b.Fatal(err)
		}
	}
}
