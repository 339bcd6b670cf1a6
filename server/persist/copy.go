package persist

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
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
	src, err := openRegular(filepath.Join(dir, StoreFile))
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
		if err := copyFile(filepath.Join(dir, name), filepath.Join(to, name), isLog); err != nil {
			return fmt.Errorf("%w: copying %s into %s: %v", ErrStore, name, to, err)
		}
	}
	return nil
}

// openRegular opens path for reading if it is a regular file: not
// through a link, and without waiting on a FIFO someone put there.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// copyFile copies the regular file from into the new file to. A log
// segment's copy stops where a start would stop reading it: after its
// header when that is not a segment's, at the size it was made at.
func copyFile(from, to string, segment bool) error {
	in, err := openRegular(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	n := fi.Size()
	if segment {
		n = segmentReadSize(in, n)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, n)); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// segmentReadSize is how much of a segment file of size bytes a start
// reads: its header alone when that is not a ssgen segment's, else up to
// the size the header says it was made at (all of a segment of an earlier
// build, which does not say). f is left at its start.
func segmentReadSize(f *os.File, size int64) int64 {
	h := make([]byte, logHeaderSize)
	k, _ := io.ReadFull(f, h)
	_, _ = f.Seek(0, io.SeekStart)
	if k < logHeaderSize || string(h[:len(logMagic)]) != logMagic {
		return int64(k)
	}
	if made := int64(binary.LittleEndian.Uint64(h[logSizeAt:])); made > 0 &&
		binary.LittleEndian.Uint32(h[logSizeAt+8:]) == crc32.Checksum(h[logSizeAt:logSizeAt+8], castagnoli) {
		return min(size, made)
	}
	return size
}
