package schemaval

import (
	"reflect"
	"sync"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// Codec encodes and decodes the values of one declared type in one
// encoding, as the codec generated code picks for a key of that type and
// encoding does. Make one with NewCodec or ForKey; it is safe for
// concurrent use.
type Codec struct {
	t   *schema.Type
	enc schema.Encoding
	// plain: a versioned struct decodes and encodes as its fields only,
	// without the version stamp (the codec of one version).
	plain bool

	once      sync.Once
	rt        reflect.Type // the mirror of t (MessagePack and JSON)
	canonical bool         // MessagePack output gets runtime/codec's canonical map order
	evolution *codec.Evolution
	shape     string // t in evolution's terms; "" when values of t do not evolve
}

// NewCodec returns the codec of values of type t stored with encoding enc.
// The pair must be one a schema allows (schema.Load refuses the others,
// such as a struct in the string encoding); Encode and Decode of a pair it
// does not allow fail with an *Error.
func NewCodec(t *schema.Type, enc schema.Encoding) *Codec {
	return &Codec{t: t, enc: enc}
}

// ForKey returns the codec of a declared key: its type and its effective
// encoding.
func ForKey(k *schema.Key) *Codec { return NewCodec(k.Type, k.Encoding) }

// Type returns the declared type.
func (c *Codec) Type() *schema.Type { return c.t }

// Encoding returns the encoding.
func (c *Codec) Encoding() schema.Encoding { return c.enc }

// IsScalar reports whether values of the type are scalars, whose plain
// text Text returns: not structs, lists or maps.
func (c *Codec) IsScalar() bool {
	switch c.t.Kind {
	case schema.KindStruct, schema.KindList, schema.KindMap:
		return false
	case schema.KindGoType:
		// A go_type's JSON or MessagePack form may be anything.
		return c.enc == schema.EncodingString
	}
	return true
}

// stringForm reports whether the type's JSON form is a string.
func (c *Codec) stringForm() bool {
	switch c.t.Kind {
	case schema.KindString, schema.KindEnum, schema.KindTime, schema.KindDuration, schema.KindBytes:
		return true
	case schema.KindGoType:
		return c.enc == schema.EncodingString
	}
	return false
}

func (c *Codec) init() {
	c.once.Do(func() {
		if c.enc != schema.EncodingMsgpack && c.enc != schema.EncodingJSON {
			return
		}
		c.rt = newMirror(c.enc).typeOf(c.t, 0)
		c.canonical = c.enc == schema.EncodingMsgpack && mayHoldMap(c.t, map[*schema.TypeDef]bool{})
		c.evolution = Evolution(reachable(c.t))
		c.shape = Shape(c.t, c.evolution)
	})
}

// upgrade brings stored bytes written by an earlier schema to the form
// the current types read, as the generated codec.Evolved does, and fails
// where it fails: bytes that cannot be upgraded are never decoded without
// their upgrade.
func (c *Codec) upgrade(data []byte) ([]byte, error) {
	if c.shape == "" {
		return data, nil
	}
	if c.enc == schema.EncodingJSON {
		return c.evolution.UpgradeJSON(data, c.shape)
	}
	return c.evolution.UpgradeMsgPack(data, c.shape, c.rt)
}
