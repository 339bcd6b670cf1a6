package schemaval

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// Rewrites says what a migration does to the stored values of a key
// (runtime/migrate rewrites a value to the bytes Current gives).
type Rewrites struct {
	// Evolves: values stored under an earlier form of a struct (a field
	// renamed_from, a default) or an earlier enum spelling read
	// differently from what this schema writes, and are rewritten.
	Evolves bool
	// Versioned is the key's versioned type when it has previous
	// versions: its values stored at another version than its
	// write_version need the user's Go conversion functions, which only
	// the generated package runs.
	Versioned *schema.TypeDef
}

// Any reports whether the key's stored values may need rewriting.
func (r Rewrites) Any() bool { return r.Evolves || r.Versioned != nil }

// RewritesOf says what migrating the stored values of k takes.
func RewritesOf(k *schema.Key) Rewrites {
	var r Rewrites
	if k.Type == nil {
		return r
	}
	if d := k.Type.Def; k.Type.Kind == schema.KindStruct && d != nil && d.Version > 0 && len(d.Previous) > 0 &&
		(k.Encoding == schema.EncodingMsgpack || k.Encoding == schema.EncodingJSON) {
		r.Versioned = d
	}
	seen := map[*schema.TypeDef]bool{}
	var walk func(t *schema.Type)
	walk = func(t *schema.Type) {
		switch {
		case t == nil || r.Evolves:
		case t.Kind == schema.KindList || t.Kind == schema.KindMap:
			walk(t.Elem)
		case (t.Kind == schema.KindStruct || t.Kind == schema.KindEnum) && t.Def != nil && !seen[t.Def]:
			seen[t.Def] = true
			if t.Def.Evolves() || t.Def.EnumRenames() {
				r.Evolves = true
				return
			}
			for _, f := range t.Def.Fields {
				walk(f.Type)
			}
			for _, pv := range t.Def.Previous {
				for _, f := range pv.Fields {
					walk(f.Type)
				}
			}
		}
	}
	walk(k.Type)
	return r
}

// ErrNeedsConversion matches a *ConversionError.
var ErrNeedsConversion = errors.New("needs a Go conversion")

// ConversionError is a stored value of a versioned type at another
// version than the one the schema writes: converting it takes the user's
// Go functions (convert...), which only the generated package runs.
type ConversionError struct {
	Type     string // the versioned type
	Stored   int    // the version the value is stored at
	Write    int    // the version the schema writes
	Function string // the Go function that converts it
}

func (e *ConversionError) Error() string {
	return fmt.Sprintf("%s is stored at version %d and written at version %d: converting it takes the Go function %s (run the generated package's Migrations)", e.Type, e.Stored, e.Write, e.Function)
}

// Is matches ErrNeedsConversion.
func (e *ConversionError) Is(target error) bool { return target == ErrNeedsConversion }

// Current returns the bytes a stored value encodes to today: data
// decoded and encoded again, as the generated codec's Current does
// (c implements codec.Upgrader, so runtime/migrate can run on it). A
// value of a versioned type stored at another version than its
// write_version gives a *ConversionError: that takes Go code.
func (c *Codec) Current(data []byte) ([]byte, error) {
	if def := c.versionedDef(); def != nil {
		v, ok, err := codec.ReadVersion(data, c.enc == schema.EncodingJSON)
		if err != nil {
			return nil, decodeErr(nil, err, "does not decode as %s (%s): %s", c.t, c.enc, causeText(err))
		}
		if !ok {
			v = def.OldestVersion()
		}
		if v != def.WriteVersion && def.VersionOf(v) != nil {
			return nil, &ConversionError{Type: def.Name, Stored: v, Write: def.WriteVersion, Function: conversionFunc(def, v)}
		}
	}
	v, err := c.Decode(data)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, decodeErr(nil, err, "does not decode as %s (%s): %s", c.t, c.enc, causeText(err))
	}
	return c.EncodeJSON(j)
}

// StoredVersion returns the version a stored value of a versioned type
// is at (the oldest when it carries no stamp); ok is false when c's type
// is not versioned or data holds no readable stamp.
func (c *Codec) StoredVersion(data []byte) (version int, ok bool) {
	def := c.versionedDef()
	if def == nil {
		return 0, false
	}
	v, stamped, err := codec.ReadVersion(data, c.enc == schema.EncodingJSON)
	if err != nil {
		return 0, false
	}
	if !stamped {
		v = def.OldestVersion()
	}
	return v, true
}

// conversionFunc names the Go function that converts version v of def to
// its write_version.
func conversionFunc(def *schema.TypeDef, v int) string {
	if def.WriteVersion != def.Version {
		// Read up to the newest version, then written back down.
		if w := def.VersionOf(def.WriteVersion); w != nil && w != def {
			if v == def.Version {
				return w.ConvertBackFuncName()
			}
			if pv := def.VersionOf(v); pv != nil && pv != def {
				return pv.ConvertFuncName() + " then " + w.ConvertBackFuncName()
			}
		}
	}
	if pv := def.VersionOf(v); pv != nil && pv != def {
		return pv.ConvertFuncName()
	}
	return "a conversion"
}

var _ codec.Upgrader = (*Codec)(nil)
