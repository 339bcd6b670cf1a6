//go:build race

package migrate_test

// raceEnabled: the race detector slows every request several times.
const raceEnabled = true
