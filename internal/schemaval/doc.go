// Package schemaval reads and writes state store values the way code
// generated from a schema does, without that code. Tools use it to show a
// stored value as JSON and to turn JSON a person typed into the bytes a typed
// reader expects: the ssgen shell verbs, the web console.
//
// A Resolver finds which declared key or lock of a schema a concrete key is,
// and parses its parameters into a Match. A Codec encodes and decodes the
// values of one declared type in one encoding: Decode turns stored bytes
// into a JSON-able value (an Object for a struct, keeping the declared field
// order), Encode turns a value from ParseJSON (or ParseInput) into stored
// bytes after checking it against the type: fields, required fields, enum
// values, integer ranges. Every failure is an *Error naming the path of the
// part at fault (".inner.name", ".table[\"k\"]", ".list[3]").
//
// # Agreement with generated code
//
// Encode writes the bytes generated code writes for the same value, and
// Decode accepts what generated code accepts, because both go through the
// same libraries with the same struct tags: Codec builds, with reflection,
// the Go types package schema says generated code declares
// (schema.BuildGoType: field kinds, tags, optional pointers), so
// MessagePack integer widths, omitted optional fields and JSON escaping
// agree byte for byte, and the canonical map order of runtime/codec is
// applied when the generated type would get it. The string encoding goes
// through runtime/codec's text codecs themselves.
//
// Where the generated code's behaviour depends on code ssgen cannot see, or
// on Go types reflection cannot build, schemaval says so instead of
// guessing:
//
//   - A go_type brings its own codec. Its JSON is passed through as given
//     (compacted) and read back as is, its string form is the text as given,
//     and its MessagePack form is read generically (whatever the bytes hold)
//     but not written: Encode refuses it.
//   - A recursive struct type (one that holds itself through an optional
//     field, a list or a map) is handled up to MaxDepth levels of itself;
//     deeper values are refused.
//
// The JSON form of a decoded value follows encoding/json applied to the
// generated type, with three changes so that any value can be shown and
// typed back: durations are Go duration strings ("1m30s"; Encode also takes
// a number of nanoseconds), MessagePack times are shown in UTC, and floats
// that JSON cannot hold are the strings "NaN", "+Inf" and "-Inf". A stored
// string that is not valid UTF-8 cannot be written in JSON: Decode returns
// it as it is (Text keeps its bytes), json.Marshal replaces the invalid
// bytes with U+FFFD.
package schemaval
