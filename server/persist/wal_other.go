//go:build !linux

package persist

import "os"

// fdatasync is a full sync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }
