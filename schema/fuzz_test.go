package schema

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad pins that no input makes Load panic or hang, and that a failed
// load always explains itself with positioned errors.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	more, _ := filepath.Glob("testdata/breaking/*/*.yaml")
	for _, name := range append(files, more...) {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Load("f.yaml", src)
		if err == nil {
			if s == nil {
				t.Fatal("nil schema without error")
			}
			_ = Compare(s, s)
			if err := WriteMarkdown(io.Discard, s); err != nil {
				t.Fatal(err)
			}
			for _, r := range s.Roles {
				for _, p := range r.Permissions() {
					if p.Access == 0 || len(p.Grants) == 0 {
						t.Fatalf("role %s: %s without access or grants", r.Name, p.What())
					}
				}
			}
			return
		}
		list, ok := err.(ErrorList)
		if !ok || len(list) == 0 {
			t.Fatalf("want a non-empty ErrorList, got %T %v", err, err)
		}
		for _, e := range list {
			if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
				t.Fatalf("error without position or message: %#v", e)
			}
		}
	})
}
