package persist

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CopyForReading copies the data file and the write-ahead log segments of
// data directory dir into to, an empty directory of the caller's, for a
// tool that opens the copy (an Open replays the log into the data file,
// upgrades its format and drops expired records: none of that may touch
// dir). Meanwhile it holds a shared lock on dir's data file, so that no
// server runs on dir or starts on it before the copy is complete; a
// server that holds it fails the copy as it fails Open. dir is only read;
// a name in it that is not a regular file (a link) is refused.
func CopyForReading(dir, to string) error {
	src, err := os.OpenFile(filepath.Join(dir, StoreFile), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	defer src.Close()
	if err := lockShared(src); err != nil {
		return fmt.Errorf("%w: open %s: locked by another process (is another ssgen serve using this data dir?)", ErrStore, src.Name())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	for _, e := range ents {
		name := e.Name()
		rest, isLog := strings.CutPrefix(name, LogPrefix)
		if name != StoreFile && !(isLog && len(rest) == 8 && strings.Trim(rest, "0123456789") == "") {
			continue
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file (%v)", ErrStore, filepath.Join(dir, name), e.Type())
		}
		if err := copyFile(filepath.Join(dir, name), filepath.Join(to, name)); err != nil {
			return fmt.Errorf("%w: copying %s into %s: %v", ErrStore, name, to, err)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.OpenFile(from, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
