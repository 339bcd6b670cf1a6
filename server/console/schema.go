package console

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
)

// schemaView reads and writes keys through a schema (Options.Schema),
// the way generated code does (package internal/schemaval).
type schemaView struct {
	r *schemaval.Resolver
}

func newSchemaView(s *schema.Schema) *schemaView {
	if s == nil {
		return nil
	}
	return &schemaView{r: schemaval.NewResolver(s)}
}

// describe says what the schema declares key to be: its declared name,
// type and value decoded to JSON (or why it does not decode), or that it
// is a lock. Keys the schema does not declare are not described.
func (v *schemaView) describe(key, value []byte) (Description, bool) {
	m, ok := v.r.Resolve(string(key))
	if !ok {
		return Description{}, false
	}
	d := declarationOf(m)
	if d.Lock {
		return d, true
	}
	if len(value) > maxSchemaDecoded {
		// Decoding costs a multiple of the stored size (defaults,
		// allocations, indentation): a 1 MB value cost 33 s and 7 GB.
		d.Error = fmt.Sprintf("not decoded: the value is %d bytes, more than the %d the console decodes through the schema (its first %d are shown as text or hex)", len(value), maxSchemaDecoded, maxShownValue)
		return d, true
	}
	val, err := m.Codec().Decode(value)
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(val, "", "  "); err == nil {
			if len(b) > maxSchemaJSON {
				err = fmt.Errorf("not shown: the value decodes to %d bytes of JSON, more than the %d the console shows", len(b), maxSchemaJSON)
			} else {
				d.JSON = string(b)
			}
		}
	}
	if err != nil {
		d.Error = err.Error()
	}
	return d, true
}

// The console decodes a value through the schema only when it is at most
// maxSchemaDecoded bytes, and shows the JSON only when it is at most
// maxSchemaJSON bytes.
const (
	maxSchemaDecoded = maxShownValue
	maxSchemaJSON    = 1 << 20
)

// declaration says what the schema declares key to be, without reading
// its value: its declared name, type and guard, or that it is a lock.
func (v *schemaView) declaration(key []byte) (Description, bool) {
	if v == nil {
		return Description{}, false
	}
	m, ok := v.r.Resolve(string(key))
	if !ok {
		return Description{}, false
	}
	return declarationOf(m), true
}

func declarationOf(m *schemaval.Match) Description {
	d := Description{Name: m.Name(), Lock: m.Lock != nil}
	if g, ok := m.Guard(); ok {
		d.Guard = &GuardInfo{Name: g.Lock.QualifiedName(), Key: display([]byte(g.Key)), TTLms: g.Lock.TTL.Milliseconds()}
	}
	if c := m.Codec(); c != nil {
		d.Type = c.Type().String() + " (" + string(c.Encoding()) + ")"
		if m.Earlier {
			// The key's earlier path (renamed_from): its values move on
			// their next write through the schema.
			d.Type = c.Type().String() + " (" + string(c.Encoding()) + "; earlier key, renamed_from)"
		}
	}
	return d
}

// moves returns, for a declared key that moved (renamed_from), its
// earlier keys, which its writes delete; for one of those earlier keys,
// the key it moved to. Both are empty for any other key.
func (v *schemaView) moves(key []byte) (current string, earlier []string) {
	if v == nil {
		return "", nil
	}
	m, ok := v.r.Resolve(string(key))
	if !ok || m.Key == nil {
		return "", nil
	}
	if m.Earlier {
		return m.CurrentKey(), nil
	}
	return "", m.EarlierKeys()
}

// declared returns the qualified name of the declaration key is, marked
// when key is the declaration's earlier key (renamed_from), or "".
func (v *schemaView) declared(key []byte) string {
	if v == nil {
		return ""
	}
	m, ok := v.r.Resolve(string(key))
	if !ok {
		return ""
	}
	if m.Earlier {
		return m.Name() + " (earlier key, renamed_from)"
	}
	return m.Name()
}

// guard returns the guard lock of the declared key, if it has one.
func (v *schemaView) guard(key []byte) (schemaval.Guard, bool) {
	if v == nil {
		return schemaval.Guard{}, false
	}
	m, ok := v.r.Resolve(string(key))
	if !ok {
		return schemaval.Guard{}, false
	}
	return m.Guard()
}

// encode turns input (JSON, or the bare text of a string-like type) into
// the stored bytes of key's declared type, checked against it.
func (v *schemaView) encode(key []byte, input string) ([]byte, error) {
	m, ok := v.r.Resolve(string(key))
	switch {
	case !ok:
		return nil, errors.New("the schema declares no key of this name")
	case m.Lock != nil:
		return nil, errors.New("this is the lock " + m.Name() + ": its value is a holder id, write it as text")
	}
	c := m.Codec()
	val, err := c.ParseInput(input)
	if err != nil {
		return nil, err
	}
	return c.Encode(val)
}
