package server

import (
	"errors"
	"fmt"

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
	err := guarded(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			var err error
			recs, floor, err = s.read(tx, formatValue)
			return err
		})
	})
	if err != nil {
		var damage *DamageError
		if errors.As(err, &damage) {
			return nil, hlc.HLC{}, err
		}
		return nil, hlc.HLC{}, fmt.Errorf("%w: load %s: %v", ErrStore, s.path, err)
	}
	return recs, floor, nil
}
