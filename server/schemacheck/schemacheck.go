// Package schemacheck judges written values against a schema, for
// server.Options.WriteCheck and TransitionCheck (ssgen serve --schema
// FILE --enforce): it reads a value as the generated code would, without
// generated code, and judges a write against the value it replaces as the
// generated read-modify-write paths do (transition rules). It
// is a package of its own so that package server, and a server without
// enforcement, never load the schema machinery.
package schemacheck

import (
	"errors"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// New returns the check of sc for server.Options.WriteCheck: a SET to a
// key sc declares must hold a value that decodes as the key's type (any
// declared version of a versioned type, or bytes an earlier schema wrote
// that evolution upgrades); a misfit is reported with Reason "decode",
// the declaration's qualified name and the field path. A key is
// resolved as its bytes, valid UTF-8 or not (a generated accessor writes
// any string parameter as it is). Undeclared keys and locks pass. The
// check is safe for concurrent use.
func New(sc *schema.Schema) func(key, value []byte) *server.WriteProblem {
	r := schemaval.NewResolver(sc)
	return func(key, value []byte) *server.WriteProblem {
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
