package server

import (
	bolt "go.etcd.io/bbolt"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// load reads and verifies every stored record again, and the highest
// version the store ever accepted (deleted keys included): what the tests
// find on disk.
func (s *durableStore) load() ([]engine.Record, hlc.HLC, error) {
	var recs []engine.Record
	var floor hlc.HLC
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		floor, _, err = s.verify(tx, formatValue)
		return err
	})
	if err == nil {
		_, err = s.restoreInto(func(chunk []engine.Record) { recs = append(recs, chunk...) })
	}
	if err != nil {
		return nil, hlc.HLC{}, err
	}
	return recs, floor, nil
}
