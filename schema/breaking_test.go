package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/golden"
)

// TestCompareReportsBreakingChanges loads each testdata/breaking/CASE's
// old.yaml and new.yaml and compares the changes with CASE/want.txt.
func TestCompareReportsBreakingChanges(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/breaking/*")
	if len(dirs) == 0 {
		t.Fatal("no testdata/breaking cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			load := func(name string) *Schema {
				src, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				s, err := Load(name, src)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return s
			}
			var b strings.Builder
			for _, c := range Compare(load("old.yaml"), load("new.yaml")) {
				b.WriteString(c.String() + "\n")
			}
			golden.Check(t, filepath.Join(dir, "want.txt"), []byte(b.String()))
		})
	}
}

func TestCompareOfASchemaWithItselfIsEmpty(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if changes := Compare(s, s); len(changes) != 0 {
			t.Errorf("%s: %v", f, changes)
		}
	}
}

func TestIntWidens(t *testing.T) {
	for _, tc := range []struct {
		from, to Kind
		want     bool
	}{
		{KindInt8, KindInt16, true}, {KindInt64, KindInt, true}, {KindInt, KindInt32, false},
		{KindUint8, KindInt16, true}, {KindUint32, KindInt32, false}, {KindInt8, KindUint64, false},
		{KindUint16, KindUint, true}, {KindUint64, KindUint8, false},
	} {
		if got := intWidens(tc.from, tc.to); got != tc.want {
			t.Errorf("intWidens(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
