//go:build !race

package migrate_test

const raceEnabled = false
