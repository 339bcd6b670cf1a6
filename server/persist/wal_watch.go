package persist

import (
	"fmt"
	"os"
)

// segmentWatch checks, around each append, that the log segment being
// written is still the file at its path, with a link, at the size it was
// made with (nothing but the log writes it, and never past its end): an
// operator's mv, rm or cp over it fails the group instead of
// acknowledging writes the next start would not read.
type segmentWatch struct {
	f    *os.File
	path string
	size int64
}

func newSegmentWatch(f *os.File, path string) (*segmentWatch, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &segmentWatch{f: f, path: path, size: fi.Size()}, nil
}

func (w *segmentWatch) lost(format string, args ...any) *fileLostError {
	return &fileLostError{path: w.path, what: fmt.Sprintf(format, args...), segment: true}
}

func (w *segmentWatch) check() *fileLostError {
	fi, err := w.f.Stat()
	switch {
	case err != nil:
		return w.lost("could not be examined (%v)", err)
	case linkCount(fi) == 0:
		return w.lost("was deleted")
	case fi.Size() != w.size:
		return w.lost("was changed by another writer (its size went from %d to %d bytes)", w.size, fi.Size())
	}
	return pathNames(w.path, fi, w.lost)
}

// boltAtPath is the data file's part of the same check for a group that
// goes to the log: the bbolt file is only written by checkpoints (whose
// own checks read its meta pages before and after), so between them it is
// enough that the path still names it and that its size and modification
// time are what the last checkpoint left. While a checkpoint runs only
// the path is checked; the checkpoint's own checks cover the rest.
//
// The file is examined under ckptMu when it is free, so that no checkpoint
// can finish between the look at the file and the look at what the last
// checkpoint left: a file examined before a checkpoint and compared with
// the state after it differs in size or time, and was taken for a file
// changed by another writer (seen under load: every kept write refused
// until a restart).
func (s *Store) boltAtPath() *fileLostError {
	var fi os.FileInfo
	var err error
	if s.ckptMu.TryLock() {
		fi, err = s.file.Stat()
		if s.afterBoltStat != nil {
			s.afterBoltStat()
		}
		size, mtime := s.watch.size, s.watch.mtime
		s.ckptMu.Unlock()
		switch {
		case err != nil:
		case fi.Size() != size:
			return s.watch.lost("was changed by another writer (its size went from %d to %d bytes)", size, fi.Size())
		case !fi.ModTime().Equal(mtime):
			return s.watch.lost("was changed by another writer (its modification time is not the last checkpoint's)")
		}
	} else {
		fi, err = s.file.Stat()
		if s.afterBoltStat != nil {
			s.afterBoltStat()
		}
	}
	switch {
	case err != nil:
		return s.watch.lost("could not be examined (%v)", err)
	case linkCount(fi) == 0:
		return s.watch.lost("was deleted")
	}
	return s.watch.atPath(fi)
}
