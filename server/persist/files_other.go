//go:build !unix

package persist

import "os"

// noFollow: the system has no O_NOFOLLOW.
const noFollow = 0

// nonBlock: no FIFOs to guard against.
const nonBlock = 0

// lockShared takes no lock where the system has no flock.
func lockShared(*os.File) error { return nil }

// checkDir checks nothing where the system has no Unix owner and mode.
func checkDir(string) error { return nil }
