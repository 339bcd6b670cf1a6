package versions_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2w"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
)

// FuzzVersionStamp feeds stored bytes to the generated codec.Versioned of
// a versioned type and to ssgen's schema-driven codec (internal/schemaval,
// what ssgen get and the console use): neither panics, both accept and
// refuse the same bytes, and what the generated codec accepts it writes
// back stamped with its write_version.
func FuzzVersionStamp(f *testing.F) {
	s, err := schema.LoadFile(filepath.Join("v2w", "ssgen.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	st := versionsv2w.New(nil)
	gen := []codec.Codec[versionsv2w.SetPoint]{st.SetPoint().Codec(), st.SetPointJSON().Codec()}
	var tools []*schemaval.Codec
	for _, name := range []string{"SetPoint", "SetPointJSON"} {
		for _, k := range s.Keys {
			if k.Name == name {
				tools = append(tools, schemaval.ForKey(k))
			}
		}
	}
	for _, seed := range []string{
		"\x82\xaafahrenheit\xcb\x40\x59\x00\x00\x00\x00\x00\x00\xa4mode\xa4heat",
		"\x83\xa2$v\x01\xaafahrenheit\x01\xa4mode\xa3off",
		"\x83\xa2$v\x02\xa7celsius\x01\xa4mode\xa3off",
		"\x83\xa2$v\x03\xa7celsius\x01\xa4mode\xa3off",
		"\x83\xa2$v\xcd\x00\x02\xa7celsius\x01\xa4mode\xa3off",
		"\x81\xa2$v\xc0",
	} {
		f.Add(uint8(0), []byte(seed))
	}
	for _, seed := range []string{
		`{"fahrenheit":212,"mode":"cool"}`, `{"$v":1,"fahrenheit":212,"mode":"cool"}`,
		`{"$v":2,"celsius":100,"mode":"cool","note":"n"}`, `{"$v":3}`, `{"$v":-1,"celsius":1,"mode":"off"}`,
		` { "$v" : 2 , "celsius":1,"mode":"off"}`, `{"$v":1e0,"fahrenheit":1,"mode":"off"}`,
	} {
		f.Add(uint8(1), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		i := int(which) % 2
		v, gerr := gen[i].Decode(data)
		_, terr := tools[i].Decode(data)
		if (gerr == nil) != (terr == nil) {
			t.Fatalf("key %d, %q: generated codec says %v, schemaval %v", i, data, gerr, terr)
		}
		if gerr != nil {
			return
		}
		out, err := gen[i].Encode(v)
		if err != nil {
			// A value missing a required enum decodes to its zero
			// value, which does not encode: refused, not written.
			if !errors.Is(err, codec.ErrEncode) {
				t.Fatalf("%q decodes to %+v, which fails to encode with %v", data, v, err)
			}
			return
		}
		if ver, ok, err := codec.ReadVersion(out, i == 1); err != nil || !ok || ver != 1 {
			t.Fatalf("written back as %q: stamp %d, %v, %v", out, ver, ok, err)
		}
	})
}
