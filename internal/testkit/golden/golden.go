// Package golden compares a test's output with the expected output kept in
// a file, sqlc-style: a mismatch fails the test with a unified diff from
// the file to the output, and `go test -update` rewrites the files instead
// (then review them with git diff).
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/ssgen/ssgen/internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files with the tests' output")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the file at path. With -update it writes got
// there instead. A mismatch or a missing file fails the test, naming the
// command that rewrites it.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test -update and review the diff):\n%s",
			path, diff.String(path, "output", want, got))
	}
}
