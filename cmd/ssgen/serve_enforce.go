package main

import (
	"errors"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// writeCheck is serve --enforce's server.Options.WriteCheck: a SET to a
// key the schema declares must hold a value that decodes as the key's
// type (any declared version of a versioned type, or bytes an earlier
// schema wrote that evolution upgrades). Undeclared keys and locks pass.
func writeCheck(sc *schema.Schema) func(key, value []byte) *server.WriteProblem {
	r := schemaval.NewResolver(sc)
	return func(key, value []byte) *server.WriteProblem {
		if !utf8.Valid(key) {
			return nil
		}
		m, ok := r.Resolve(string(key))
		if !ok || m.Key == nil || m.Codec() == nil {
			return nil
		}
		if _, err := m.Codec().Decode(value); err != nil {
			p := &server.WriteProblem{Declaration: m.Name(), Reason: "decode", Msg: err.Error()}
			var se *schemaval.Error
			if errors.As(err, &se) {
				p.Path, p.Msg = se.Path, se.Msg
			}
			return p
		}
		return nil
	}
}
