package server

import "github.com/ssgen/ssgen/server/persist"

// The durable store lives in package persist; these names keep the ones
// it had in this package working.

// StoreFile is the name of the bbolt database inside Options.DataDir.
const StoreFile = persist.StoreFile

// LogPrefix starts the name of every write-ahead log segment inside
// Options.DataDir; see persist.LogPrefix.
const LogPrefix = persist.LogPrefix

// ErrStore wraps every failure to open, read or write the durable store;
// match it with errors.Is.
var ErrStore = persist.ErrStore

// DamageError reports a data file that failed a check on open or load;
// see persist.DamageError.
type DamageError = persist.DamageError

// CommitEvent is one commit of the durable store, as Options.OnCommit is
// told of it; see persist.CommitEvent.
type CommitEvent = persist.CommitEvent

// PersistStats are running totals of the data file's group commits; see
// persist.Stats.
type PersistStats = persist.Stats
