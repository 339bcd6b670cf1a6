//go:build unix

package persist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// noFollow is in the flags of every file the store opens in its
// directory: a name that is a symbolic link is refused (ELOOP), never
// followed to a file elsewhere.
const noFollow = syscall.O_NOFOLLOW

// nonBlock opens a FIFO without waiting for a writer.
const nonBlock = syscall.O_NONBLOCK

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
		return checkAncestors(dir)
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

// checkAncestors refuses a data directory inside one that a user other
// than root and this process's may rename things in: owned by another
// user, or writable by anyone without the sticky bit (as /tmp has). Such
// a user could swap the data directory for one of theirs between the
// checks and the opens, which go by name.
func checkAncestors(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return err
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("data directory %s refused: it is inside %s, which uid %d owns and could swap it for another; use a directory whose every parent is root's or yours", dir, p, st.Uid)
		}
		if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("data directory %s refused: it is inside %s, which anyone may write (mode %v, no sticky bit) and so swap it for another; use a directory whose every parent is safe", dir, p, fi.Mode())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
