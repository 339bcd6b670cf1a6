package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteMarkdownMatchesGolden renders each valid schema and compares
// it with testdata/valid/NAME.md.
func TestWriteMarkdownMatchesGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load(filepath.Base(f), src)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteMarkdown(&b, s); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".md"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("markdown differs from %s\n got:\n%s", golden, b.String())
			}
		})
	}
}
