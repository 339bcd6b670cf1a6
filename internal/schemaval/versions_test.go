package schemaval_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

func versionedCodecs(t *testing.T) map[schema.Encoding]*schemaval.Codec {
	s, err := schema.Load("v.yaml", []byte(`
version: 1
package: p
types:
  R:
    version: 3
    write_version: 2
    fields:
      kelvin: {type: float64, renamed_from: k}
      unit: {type: string, default: K}
    previous:
      1:
        fields: {fahrenheit: float64}
      2:
        fields: {celsius: float64}
keys:
  M: {path: m, type: R}
  J: {path: j, type: R, encoding: json}
`))
	if err != nil {
		t.Fatal(err)
	}
	return map[schema.Encoding]*schemaval.Codec{
		schema.EncodingMsgpack: schemaval.ForKey(s.Keys[0]),
		schema.EncodingJSON:    schemaval.ForKey(s.Keys[1]),
	}
}

// A versioned value decodes as the version its stamp names (none: the
// oldest), the newest through its own renamed_from and default, and
// encodes as the version a "$v" member names, else the write_version.
func TestVersionedValuesDecodeAsTheirStoredVersion(t *testing.T) {
	for enc, c := range versionedCodecs(t) {
		for _, tc := range []struct{ in, want string }{
			{`{"$v": 1, "fahrenheit": 50}`, `{"$v":1,"fahrenheit":50}`},
			{`{"celsius": 10}`, `{"$v":2,"celsius":10}`},
			{`{"$v": 3, "kelvin": 283, "unit": "K"}`, `{"$v":3,"kelvin":283,"unit":"K"}`},
		} {
			data, err := c.EncodeJSON([]byte(tc.in))
			if err != nil {
				t.Fatalf("%s: Encode(%s): %v", enc, tc.in, err)
			}
			v, err := c.Decode(data)
			if err != nil {
				t.Fatalf("%s: Decode(%q): %v", enc, data, err)
			}
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Errorf("%s: %s decodes to %s, want %s", enc, tc.in, got, tc.want)
			}
		}
	}
	// Stored without a stamp: the oldest version.
	v, err := versionedCodecs(t)[schema.EncodingJSON].Decode([]byte(`{"fahrenheit":50}`))
	if got, _ := json.Marshal(v); err != nil || string(got) != `{"$v":1,"fahrenheit":50}` {
		t.Errorf("unstamped value: %s, %v", got, err)
	}
	// The newest version's own renamed_from and default apply.
	v, err = versionedCodecs(t)[schema.EncodingJSON].Decode([]byte(`{"$v":3,"k":5}`))
	if got, _ := json.Marshal(v); err != nil || string(got) != `{"$v":3,"kelvin":5,"unit":"K"}` {
		t.Errorf("evolving newest version: %s, %v", got, err)
	}
}

func TestVersionedValuesRefused(t *testing.T) {
	for enc, c := range versionedCodecs(t) {
		for _, in := range []string{
			`{"$v": 4, "kelvin": 1}`, `{"$v": 0, "kelvin": 1}`, `{"$v": "3", "kelvin": 1}`,
			`{"$v": 1.5, "fahrenheit": 1}`, `{"$v": 1, "celsius": 1}`, `{"kelvin": 1, "unit": "K"}`, `{"fahrenheit": 50}`,
		} {
			if _, err := c.EncodeJSON([]byte(in)); !errors.Is(err, codec.ErrEncode) {
				t.Errorf("%s: Encode(%s) = %v, want an encode error", enc, in, err)
			}
		}
	}
	_, err := versionedCodecs(t)[schema.EncodingJSON].Decode([]byte(`{"$v":4,"kelvin":1}`))
	if !errors.Is(err, codec.ErrDecode) || !errors.Is(err, codec.ErrVersion) || !strings.Contains(err.Error(), "version 4") {
		t.Errorf("Decode of version 4: %v", err)
	}
	_, err = versionedCodecs(t)[schema.EncodingMsgpack].Decode([]byte("\x81\xa2$v\xc0"))
	if !errors.Is(err, codec.ErrDecode) {
		t.Errorf("Decode of a nil stamp: %v", err)
	}
}
