package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/golden"
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
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".md", b.Bytes())
		})
	}
}
