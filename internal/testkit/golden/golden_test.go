package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the failure instead of failing.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.msg = fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.msg = fmt.Sprintf(f, a...) }

func TestCheckShowsAUnifiedDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "want.txt")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nB\nc\n"))
	for _, want := range []string{"--- " + path, "+++ output", "-b", "+B", "go test -update"} {
		if !strings.Contains(r.msg, want) {
			t.Errorf("failure lacks %q:\n%s", want, r.msg)
		}
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\nc\n"))
	if r.msg != "" {
		t.Errorf("equal output failed: %s", r.msg)
	}
	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing"), nil)
	if !strings.Contains(r.msg, "go test -update") {
		t.Errorf("a missing file says %q", r.msg)
	}
}
