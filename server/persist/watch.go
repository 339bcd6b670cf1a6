package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// fileWatch notices that the data file the store has open is no longer
// the file at its path, or no longer holds what the store wrote, before a
// group commit's writes are acknowledged. A restore script, an operator's
// mv or rm, or a backup tool that copies over the file would otherwise
// make every later acknowledgement a lie: bbolt keeps writing to the open
// file, which the next start never reads (moved away, or deleted), or
// writes its pages into another file's contents (overwritten in place,
// where bbolt may also panic or fault on its next read of the map).
// bbolt's flock does not help: it is advisory, and cp, mv and rm ignore it.
//
// Each commit costs one fstat, one stat of the path and two reads of a
// meta page's first 80 bytes before it, and the same after it:
//
//   - before: the path still names the open file, and the file's size,
//     modification time and both meta pages are what the last commit
//     left (only bbolt's commits write the file), so bbolt writes
//     neither into a file someone else wrote (an overwrite in place is
//     refused without touching the new contents) nor a refused write
//     into a file moved aside.
//   - after: the path still names the open file (device and inode) and the
//     file still has a link, the meta page this commit did not write is
//     still the one recorded, and the one it wrote holds its transaction:
//     a file replaced, deleted or overwritten before or during the commit
//     fails it instead of acknowledging writes the next start will not see.
//
// A change after the last check of a commit comes after its
// acknowledgements: the next commit's first check finds it. Not told
// apart: an overwrite in place by a file whose meta pages are byte for
// byte the ones recorded (a store with the same history and page layout)
// that lands during a commit and that bbolt does not panic on, or before
// it within the same tick of the file system's clock: bbolt then writes
// the commit on top of the other file's pages, so its writes are in the
// file at the path, and memory keeps what the other file replaced until
// a restart.
type fileWatch struct {
	f        *os.File // bbolt's own descriptor of the file
	path     string
	pageSize int64
	size     int64                // the file's size after the last commit
	mtime    time.Time            // and its modification time
	meta     [2][boltMetaEnd]byte // both meta pages as the last commit left them
	buf      [boltMetaEnd]byte
}

// fileLostError is the data file found replaced, deleted or changed by
// another writer. It is final: the store refuses every later commit with
// it, until the server is restarted. It wraps ErrStore.
type fileLostError struct {
	path string
	what string // what happened to it, in a few words
	open string // where the open file is now, when the system says ("" if not)
	fd   string // /proc/PID/fd/N, when the open file has no name left
	// segment: the file is a write-ahead log segment (wal_watch.go).
	segment bool
}

func (e *fileLostError) Error() string {
	if e.segment {
		return fmt.Sprintf("%v: the write-ahead log segment %s %s while the server ran; kept writes are refused until the server is restarted; the writes acknowledged before this are written into the data file when the server stops (a kill -9 before then loses those the segment held)",
			ErrStore, e.path, e.what)
	}
	s := fmt.Sprintf("%v: the data file %s %s while the server ran; kept writes are refused until the server is restarted, and a restart opens the file then at %s",
		ErrStore, e.path, e.what, e.path)
	if e.open != "" {
		s += "; writes acknowledged before this went to the file the server has open, now " + strconv.Quote(e.open)
		if e.fd != "" {
			s += ", which can be copied from " + e.fd + " until the server stops"
		}
	}
	return s
}

func (e *fileLostError) Unwrap() error { return ErrStore }

// newFileWatch records the file's state as the open left it.
func newFileWatch(f *os.File, path string, pageSize int) (*fileWatch, error) {
	w := &fileWatch{f: f, path: path, pageSize: int64(pageSize)}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	w.size, w.mtime = fi.Size(), fi.ModTime()
	for id := range w.meta {
		if _, err := f.ReadAt(w.meta[id][:], int64(id)*w.pageSize); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// lost builds the error for what happened to the file.
func (w *fileWatch) lost(format string, args ...any) *fileLostError {
	e := &fileLostError{path: w.path, what: fmt.Sprintf(format, args...), open: openFileName(w.f)}
	if strings.HasSuffix(e.open, " (deleted)") {
		e.fd = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), w.f.Fd())
	}
	return e
}

// before checks that the file is as the last commit left it.
func (w *fileWatch) before() *fileLostError {
	fi, err := w.f.Stat()
	switch {
	case errors.Is(err, os.ErrClosed):
		return nil // the store is closed: bbolt says so
	case err != nil:
		return w.lost("could not be examined (%v)", err)
	case linkCount(fi) == 0:
		return w.lost("was deleted")
	case fi.Size() != w.size:
		return w.lost("was changed by another writer (its size went from %d to %d bytes)", w.size, fi.Size())
	case !fi.ModTime().Equal(w.mtime):
		return w.lost("was changed by another writer (its modification time is not the last commit's)")
	}
	if err := w.atPath(fi); err != nil {
		return err
	}
	for id := range w.meta {
		if err := w.readMeta(id); err != nil {
			return err
		}
		if w.buf != w.meta[id] {
			return w.lost("was overwritten by another writer (bbolt meta page %d is not the one this server wrote)", id)
		}
	}
	return nil
}

// after checks, once transaction txid is on disk, that the file at the
// path is the open file, with that transaction in it, and records its
// state for the next commit. For a transaction that failed (committed
// false), the meta page it would have written may hold it or be as
// recorded.
func (w *fileWatch) after(txid uint64, committed bool) *fileLostError {
	open, err := w.f.Stat()
	if err != nil {
		return w.lost("could not be examined (%v)", err)
	}
	if linkCount(open) == 0 {
		return w.lost("was deleted")
	}
	if err := w.atPath(open); err != nil {
		return err
	}
	// bbolt writes meta page txid%2: the other one must be as recorded.
	other := 1 - txid%2
	if err := w.readMeta(int(other)); err != nil {
		return err
	}
	if w.buf != w.meta[other] {
		return w.lost("was overwritten by another writer (bbolt meta page %d is not the one this server wrote)", other)
	}
	if err := w.readMeta(int(txid % 2)); err != nil {
		return err
	}
	if m, err := decodeBoltMeta(w.buf[:], txid%2); (err != nil || m.txid != txid) && (committed || w.buf != w.meta[txid%2]) {
		return w.lost("was overwritten by another writer (bbolt meta page %d does not hold transaction %d)", txid%2, txid)
	}
	w.meta[txid%2] = w.buf
	w.size, w.mtime = open.Size(), open.ModTime()
	return nil
}

// atPath checks that the path still names the open file (open: its
// FileInfo).
func (w *fileWatch) atPath(open os.FileInfo) *fileLostError {
	return pathNames(w.path, open, w.lost)
}

// pathNames checks that path still names the open file (open: its
// FileInfo), reporting what happened to it through lost: the data file's
// and the log segments' watches share it.
func pathNames(path string, open os.FileInfo, lost func(format string, args ...any) *fileLostError) *fileLostError {
	switch at, err := os.Stat(path); {
	case isNotExist(err):
		return lost("was moved away or deleted")
	case err != nil:
		return lost("could not be looked up (%v)", err)
	case !os.SameFile(open, at):
		return lost("was replaced by another file")
	}
	return nil
}

// readMeta reads the first bytes of meta page id into buf.
func (w *fileWatch) readMeta(id int) *fileLostError {
	if _, err := w.f.ReadAt(w.buf[:], int64(id)*w.pageSize); err != nil {
		return w.lost("could not be read (%v)", err)
	}
	return nil
}

// openFileName is where the open file f is now, as /proc/self/fd says
// (Linux: the new name of a moved file, "… (deleted)" for a deleted one),
// or "" when the system does not say. Bounded: a name someone else chose
// ends up in a log line.
func openFileName(f *os.File) string {
	name, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10))
	if err != nil {
		return ""
	}
	const limit = 1024
	if len(name) > limit {
		name = name[:limit] + "…"
	}
	return string(bytes.ToValidUTF8([]byte(name), []byte("?")))
}
