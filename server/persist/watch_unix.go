//go:build unix

package persist

import (
	"os"
	"syscall"
)

// linkCount is the number of names a file has (0: deleted while open),
// or 1 when the system does not say.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
