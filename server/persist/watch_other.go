//go:build !unix

package persist

import "os"

// linkCount is 1: this system's os.FileInfo carries no link count. A
// deleted or replaced file is still caught by the stat of its path.
func linkCount(os.FileInfo) uint64 { return 1 }
