package schemaval

import (
	"encoding/json"
	"errors"
	"sort"
	"strconv"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// versionedDef returns the versioned struct of c's type (a key's value
// of a versioned type in a map encoding), or nil.
func (c *Codec) versionedDef() *schema.TypeDef {
	if c.plain || c.t.Kind != schema.KindStruct || c.t.Def == nil || c.t.Def.Version == 0 {
		return nil
	}
	if c.enc != schema.EncodingMsgpack && c.enc != schema.EncodingJSON {
		return nil
	}
	return c.t.Def
}

// versionCodec returns the codec of version v of the versioned def, or nil
// when def does not declare it.
func (c *Codec) versionCodec(def *schema.TypeDef, v int) *Codec {
	vd := def.VersionOf(v)
	if vd == nil {
		return nil
	}
	t := c.t
	if vd != def {
		t = &schema.Type{Kind: schema.KindStruct, Def: vd, Pos: c.t.Pos}
	}
	return &Codec{t: t, enc: c.enc, plain: true}
}

// decodeVersioned decodes a value of a versioned type as the version its
// stamp names (none: the oldest), without converting it (that takes the
// user's Go code): an Object of that version's fields led by the stamp,
// codec.VersionField, so that the value says which version it is.
func (c *Codec) decodeVersioned(def *schema.TypeDef, data []byte) (any, error) {
	v, ok, err := codec.ReadVersion(data, c.enc == schema.EncodingJSON)
	if err != nil {
		return nil, decodeErr(nil, err, "does not decode as %s (%s): %s", c.t, c.enc, causeText(err))
	}
	if !ok {
		v = def.OldestVersion()
	}
	vc := c.versionCodec(def, v)
	if vc == nil {
		err := &codec.VersionError{Type: def.Name, Version: v, Known: knownVersions(def)}
		return nil, decodeErr(nil, err, "does not decode as %s (%s): %s", c.t, c.enc, causeText(err))
	}
	val, err := vc.Decode(data)
	if err != nil {
		return nil, err
	}
	obj, _ := val.(Object)
	return append(Object{{Name: codec.VersionField, Value: v}}, obj...), nil
}

func knownVersions(def *schema.TypeDef) []int {
	out := []int{def.Version}
	for _, pv := range def.Previous {
		out = append(out, pv.Version)
	}
	sort.Ints(out)
	return out
}

// encodeVersioned encodes v, a JSON object, as the version its
// codec.VersionField member names, or as the type's write_version when it
// has none, and stamps it: no conversion is made (that takes the user's
// Go code), so the object must have that version's fields.
func (c *Codec) encodeVersioned(def *schema.TypeDef, v any) ([]byte, error) {
	ver := def.WriteVersion
	if m, ok := v.(map[string]any); ok {
		if sv, ok := m[codec.VersionField]; ok {
			n, err := stampValue(sv)
			if err != nil {
				return nil, encodeErr((*path)(nil).fieldOf(codec.VersionField), "%s: want one of the declared versions %v, got %s", def.Name, knownVersions(def), describeJSON(sv))
			}
			ver = n
			rest := make(map[string]any, len(m)-1)
			for k, x := range m {
				if k != codec.VersionField {
					rest[k] = x
				}
			}
			v = rest
		}
	}
	vc := c.versionCodec(def, ver)
	if vc == nil {
		return nil, encodeErr((*path)(nil).fieldOf(codec.VersionField), "%s has no version %d (declared: %v)", def.Name, ver, knownVersions(def))
	}
	data, err := vc.Encode(v)
	if err != nil {
		return nil, err
	}
	out, err := codec.StampVersion(data, c.enc == schema.EncodingJSON, ver)
	if err != nil {
		return nil, encodeErr(nil, "%s", err)
	}
	return out, nil
}

func stampValue(v any) (int, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		s = strconv.Itoa(x)
	default:
		return 0, errors.New("not a number")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > codec.MaxVersion {
		return 0, errors.New("not a version")
	}
	return n, nil
}
