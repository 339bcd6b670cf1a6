// Package persist is the state store's durable store: the keys the engine
// marks durable (aio-persistence, or every key with PersistAll), kept in
// one bbolt file in the server's data directory. It is the engine's
// journal (engine.Journal) through a group commit: the changes of every
// write that came while one transaction was on disk share the next one,
// and answers that depend on a change wait until it is durable.
//
// Open checks the file before trusting it (bbolt's meta pages and page
// tree, each record's checksum) and fails with a *DamageError on damage;
// with Options.Repair it salvages the readable records into a new file
// and keeps the damaged one aside. While the store runs, each commit
// checks that the file is still the one it opened (a file replaced,
// deleted or overwritten under the server stops kept writes rather than
// losing them silently).
//
// Files: store.go (the file, its records and their checksums), commit.go
// (the group commit), load.go (the two-pass load), check.go (bbolt's
// on-disk format, checked without bbolt), repair.go (salvage), watch*.go
// (the file replaced under a running server).
//
// Package server opens it for Options.DataDir; its names StoreFile,
// ErrStore, DamageError, CommitEvent and PersistStats (Stats here) are
// this package's.
package persist
