package persist

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// What the external tests (package persist_test, which start servers)
// read of the file format.

var (
	BucketMeta   = bucketMeta
	BucketKeys   = bucketKeys
	MetaFormat   = metaFormat
	MetaClock    = metaClock
	FormatV1     = formatV1
	FormatValue  = formatValue
	DisplayKey   = displayKey
	EncodeRecord = encodeRecord
)

// Salvage walks file as a repair would: how many records it recovered,
// what it left out, and the pages it reached.
func Salvage(file []byte) (recs int, skipped []string, pages map[uint64]bool) {
	got := salvage(bytes.NewReader(file), int64(len(file)))
	return len(got.recs), got.skipped, got.pages
}

// PageSize is the page size meta page 0 of file declares.
func PageSize(file []byte) (int64, error) {
	m, err := decodeBoltMeta(file, 0)
	return int64(m.pageSize), err
}

// Page is the header of the page b starts with: whether it is a leaf,
// and how many overflow pages follow it.
func Page(b []byte) (leaf bool, overflow uint32) {
	p, _ := decodeBoltPage(b)
	return p.flags == boltLeafPage, p.overflow
}

// MetaTxIDs are the transaction ids of r's two meta pages.
func MetaTxIDs(r io.ReaderAt, size int64) (tx0, tx1 uint64, err0, err1 error) {
	m0, m1, err0, err1 := readBoltMetas(r, size)
	return m0.txid, m1.txid, err0, err1
}

// ReadBack opens the closed data file at path again and returns its
// records, its floor and its format.
func ReadBack(path string) (recs []engine.Record, floor hlc.HLC, format []byte, err error) {
	s, err := openChecked(path, Options{Direct: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, hlc.HLC{}, nil, err
	}
	defer s.Close()
	recs, floor, err = s.Records()
	if err != nil {
		return nil, hlc.HLC{}, nil, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		format = bytes.Clone(tx.Bucket(bucketMeta).Get(metaFormat))
		return nil
	})
	return recs, floor, format, err
}

// binaryKey is damage_test.go's key with bytes that are not printable.
const binaryKey = "bin\x00\xff"

// CopyDir copies the files of dir into to.
var CopyDir = copyDir

// CrashWithFullLog opens the store in dir (n kept keys bench/%08d) with
// the log, appends groups of 25 overwritten keys until a checkpoint would
// start, and copies the directory into image before closing: what a crash
// with a full log, none of it checkpointed, leaves.
func CrashWithFullLog(tb testing.TB, dir, image string, n int) {
	tb.Helper()
	s, err := Open(dir, Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	version := hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "bench"}
	value := make([]byte, 100)
	var group []queuedChange
	var written int64
	for i := 0; written < checkpointBytes; i++ {
		group = group[:0]
		for j := range 25 {
			version.Counter++
			group = append(group, queuedChange{uint64(i), engine.Change{Record: engine.Record{
				Key: fmt.Sprintf("bench/%08d", (i*25+j)*7919%n), Value: value, Version: version}}})
		}
		before := s.wal.off
		if err := s.wal.append(group); err != nil {
			tb.Fatal(err)
		}
		written += max(s.wal.off-before, 0)
	}
	copyDir(tb, dir, image)
	_ = s.Close()
}
