//go:build linux

package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync writes f's data to disk, and of its metadata only what is
// needed to read it back (a write-ahead log segment never changes size).
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
