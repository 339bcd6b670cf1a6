//go:build unix

package persist

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// noFollow is in the flags of every file the store opens in its
// directory: a name that is a symbolic link is refused (ELOOP), never
// followed to a file elsewhere.
const noFollow = syscall.O_NOFOLLOW

// checkDir refuses a data directory that another user owns or that group
// or others may write: whoever can put names in it could plant links or
// files where the store creates and reads its own.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	var why []string
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		why = append(why, fmt.Sprintf("it is owned by uid %d, not by this process's user (uid %d): chown it", st.Uid, os.Geteuid()))
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		why = append(why, fmt.Sprintf("group or others may write it (mode %04o): chmod go-w it", perm))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("data directory %s refused: %s; others could replace the files in it. Or name a directory inside it that does not exist yet: the server makes it, private (0700)", dir, strings.Join(why, "; "))
}

// lockShared takes a shared lock on f, as a reader beside bbolt's
// exclusive one: it waits up to a second for a holder to let go, as
// bbolt's Open does.
func lockShared(f *os.File) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
