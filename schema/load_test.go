package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/golden"
)

func TestLoadAcceptsValidSchemas(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/valid/*.yaml")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := LoadFile(f); err != nil {
				t.Fatalf("want no error, got:\n%v", err)
			}
		})
	}
}

// TestLoadReportsEachError loads every testdata/errors/NAME.yaml and
// compares the errors with NAME.want, one "line:col: message" a line.
func TestLoadReportsEachError(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/errors/*.yaml")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load("x.yaml", src)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want an ErrorList, got %v (schema %v)", err, s != nil)
			}
			got := strings.ReplaceAll(list.Error(), "x.yaml:", "") + "\n"
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".want", []byte(got))
		})
	}
}
