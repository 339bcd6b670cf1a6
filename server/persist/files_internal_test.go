//go:build unix

package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Names planted in the data directory by someone who may write there are
// never followed: a link where the store makes its next segment is
// replaced, not written through; a data file or a segment that is a link
// is refused, its target neither created nor read; a directory others may
// write, or owned by another user, is refused before anything is opened.
func TestDataDirectoryLinksAreNotFollowed(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		if b, err := os.ReadFile(victim); err != nil || string(b) != "secret\n" {
			t.Fatalf("the link's target was written: %q, %v", b, err)
		}
	}

	t.Run("the next segment's temporary name", func(t *testing.T) {
		dir := t.TempDir()
		for _, n := range []string{"00000001", "00000002"} {
			if err := os.Symlink(victim, filepath.Join(dir, LogPrefix+n+".tmp")); err != nil {
				t.Fatal(err)
			}
		}
		s := mustOpen(t, dir)
		put(t, s, "kept")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		unchanged(t)
		if got := keysOf(t, mustOpen(t, dir)); got != "kept" {
			t.Fatalf("keys %q", got)
		}
	})
	t.Run("a data file that is a link", func(t *testing.T) {
		dir := t.TempDir()
		created := filepath.Join(outside, "created")
		if err := os.Symlink(created, filepath.Join(dir, StoreFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err == nil {
			t.Fatal("a data file that is a link to nowhere was opened")
		}
		if _, err := os.Lstat(created); !os.IsNotExist(err) {
			t.Fatalf("the link's target was created: %v", err)
		}
		if err := os.Remove(filepath.Join(dir, StoreFile)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(dir, StoreFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{Repair: true}); err == nil {
			t.Fatal("a data file that is a link was opened")
		}
		unchanged(t)
	})
	t.Run("a segment that is a link", func(t *testing.T) {
		dir := t.TempDir()
		if err := mustOpen(t, dir).Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, LogPrefix+"00000001")); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), LogPrefix+"00000001") {
			t.Fatalf("start with a segment linked to /dev/zero: %v", err)
		}
	})
	t.Run("a huge segment", func(t *testing.T) {
		dir := withHugeSegment(t)
		// Refused from its header: the 8 GiB are never read.
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), "no SSGENLOG magic") {
			t.Fatalf("start with a huge segment: %v", err)
		}
	})
	t.Run("a directory others may write", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), "chmod go-w") {
			t.Fatalf("start in a directory of mode 0777: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, StoreFile)); !os.IsNotExist(err) {
			t.Fatalf("a file was made in it: %v", err)
		}
	})
	t.Run("inside a directory another user owns", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a directory away")
		}
		parent := t.TempDir()
		if err := os.Chown(parent, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), "which uid 65534 owns") {
			t.Fatalf("start inside a directory owned by nobody: %v", err)
		}
	})
	t.Run("inside a directory anyone may write", func(t *testing.T) {
		parent := t.TempDir()
		if err := os.Chmod(parent, 0o777); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "data")
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), "anyone may write") {
			t.Fatalf("start inside a directory of mode 0777: %v", err)
		}
		if err := os.Chmod(parent, 0o777|os.ModeSticky); err != nil { // as /tmp
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err != nil {
			t.Fatalf("start inside a sticky directory: %v", err)
		}
	})
	t.Run("a directory another user owns", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give a directory away")
		}
		dir := t.TempDir()
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := openT(t, dir, Options{}); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("start in a directory owned by nobody: %v", err)
		}
	})
}

// CopyForReading (export --data-dir) neither waits on a FIFO put where the
// data file should be nor copies more of a segment than a start reads:
// a huge file whose header is not a segment's is copied as its header.
func TestCopyForReadingCopiesOnlyWhatAStartReads(t *testing.T) {
	t.Run("a FIFO for the data file", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, StoreFile), 0o600); err != nil {
			t.Skip(err)
		}
		if err := CopyForReading(dir, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("copy with a FIFO for the data file: %v", err)
		}
	})
	t.Run("a huge segment", func(t *testing.T) {
		dir := withHugeSegment(t)
		to := t.TempDir()
		if err := CopyForReading(dir, to); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(to, LogPrefix+"00000001")); err != nil || fi.Size() != logHeaderSize {
			t.Fatalf("the copy of a huge segment: %v, %v", fi, err)
		}
	})
}

// withHugeSegment is a closed data directory beside which someone put an
// 8 GiB segment (sparse: no disk used) whose header is not a segment's.
func withHugeSegment(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := mustOpen(t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LogPrefix+"00000001")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 8<<30); err != nil {
		t.Skip(err)
	}
	return dir
}
