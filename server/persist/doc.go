// Package persist is the state store's durable store: the keys the engine
// marks durable (aio-persistence, or every key with PersistAll), kept in
// one bbolt file in the server's data directory, with a write-ahead log in
// front of it. It is the engine's journal (engine.Journal) through a group
// commit: the changes of every write that came while one group was on its
// way to disk share the next one (one log record and one fdatasync; with
// Options.Direct, one bbolt transaction), and answers that depend on a
// change wait until it is durable. Checkpoints bring the bbolt file up to
// date off the request path; Open replays the log's records the file does
// not have.
//
// Open checks the file and the log before trusting them (bbolt's meta
// pages and page tree, each record's checksum, each log segment's header
// and records) and fails with a *DamageError on damage; with
// Options.Repair it salvages the readable records and keeps the damaged
// files aside. While the store runs, each commit checks that the files
// are still the ones it opened (a file replaced, deleted or overwritten
// under the server stops kept writes rather than losing them silently).
//
// Files: store.go (the file, its records and their checksums), commit.go
// (the group commit), load.go (the two-pass load), check.go (bbolt's
// on-disk format, checked without bbolt), repair.go (salvage), watch*.go
// (the file replaced under a running server), wal*.go (the write-ahead
// log: segments, records, their reader and the segment watch) and
// checkpoint.go (checkpoints, replay, the format 3 meta values).
//
// Package server opens it for Options.DataDir; its names StoreFile,
// LogPrefix, ErrStore, DamageError, CommitEvent and PersistStats (Stats
// here) are this package's.
package persist
