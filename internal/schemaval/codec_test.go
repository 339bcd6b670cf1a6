package schemaval_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/codec"
)

// minimalScalars are the required scalar fields of Everything.
const minimalScalars = `"b":false,"i":0,"i8":0,"i16":0,"i32":0,"i64":0,"u":0,"u8":0,"u16":0,"u32":0,"u64":0,"f32":0,"f64":0,"s":"","at":"2026-01-01T00:00:00Z","every":"1s"`

// Every misfit is refused before any byte is written, with the path of
// the part at fault and what was wanted.
func TestEncodeRefusesMisfits(t *testing.T) {
	s := kindsSchema(t)
	inner := `"inner":{"name":"x"},` + minimalScalars
	tests := []struct {
		key, input string
		want       string // the whole message
	}{
		{"Plain", `{"zeta":1}`, `Plain: required field "alpha" is missing`},
		{"Plain", `{}`, `Plain: required fields "zeta", "alpha" are missing`},
		{"Plain", `{"zeta":1,"alpha":"a","alfa":2}`, `.alfa: Plain has no such field (did you mean "alpha"?) (its fields: zeta, alpha, when)`},
		{"Plain", `{"zeta":1.5,"alpha":"a"}`, `.zeta: want a int (-9223372036854775808..9223372036854775807), got the number 1.5`},
		{"Plain", `{"zeta":"1","alpha":"a"}`, `.zeta: want a int (-9223372036854775808..9223372036854775807), got the string "1"`},
		{"Plain", `{"zeta":1,"alpha":null}`, `.alpha: want a string, got null`},
		{"Plain", `{"zeta":1,"alpha":"a","when":"yesterday"}`, `.when: "yesterday" is not an RFC 3339 time like 2026-01-02T15:04:05Z`},
		{"Plain", `[1]`, `want a Plain (JSON object), got a list`},
		{"Plain", `{"zeta":1,"zeta":2,"alpha":"a"}`, `["zeta"]: member given twice`},
		{"Plain", `{"zeta":1,"alpha":"a"} {}`, `not one JSON value: more follows at byte 24`},
		{"Plain", `{"zeta":1,`, `not JSON: it ends too early`},
		{"Enum", `"warm"`, `"warm" is not a Mode (want one of "heat", "cool", "off", "two words")`},
		{"Enum", `"hat"`, `"hat" is not a Mode (want one of "heat", "cool", "off", "two words") (did you mean "heat"?)`},
		{"Enum", `3`, `want a Mode (a string: "heat", "cool", "off", "two words"), got the number 3`},
		{"Int8", `128`, `want a int8 (-128..127), got the number 128`},
		{"Uint8", `-1`, `want a uint8 (0..255), got the number -1`},
		{"Uint64", `18446744073709551616`, `want a uint64 (0..18446744073709551615), got the number 18446744073709551616`},
		{"Float32", `1e39`, `the number 1e39 is out of range for float32`},
		{"Float32", `"hot"`, `want a float32 (a number, or "NaN", "+Inf", "-Inf"), got the string "hot"`},
		{"Bool", `"true"`, `want true or false, got the string "true"`},
		{"Raw", `"not base64!"`, `want bytes as a base64 string: illegal base64 data at input byte 3`},
		{"Duration", `"soon"`, `"soon" is not a Go duration like 1m30s or 250ms`},
		{"JSON", `{"mode":"heat","inner":{"name":"x"},` + strings.Replace(minimalScalars, `"f64":0`, `"f64":"NaN"`, 1) + `}`, `.f64: the string "NaN" cannot be stored in JSON`},
		{"Packed", `{"mode":"heat",` + inner + `,"table":{"a":"x"}}`, `.table["a"]: want a int64 (-9223372036854775808..9223372036854775807), got the string "x"`},
		{"Packed", `{"mode":"heat",` + inner + `,"nested":{"k":[{"name":"a"},{"nam":"b"}]}}`, `.nested["k"][1].nam: Inner has no such field (did you mean "name"?) (its fields: name, weight)`},
		{"Packed", `{"mode":"heat",` + inner + `,"modes":["heat","cold"]}`, `.modes[1]: "cold" is not a Mode (want one of "heat", "cool", "off", "two words") (did you mean "cool"?)`},
		{"Packed", `{"mode":"heat",` + inner + `,"self":{"mode":"heat","inner":{}}}`, `.self.inner: Inner: required field "name" is missing`},
		{"Packed", `{"mode":"heat",` + minimalScalars + `}`, `Everything: required field "inner" is missing`},
		{"Packed", `{"mode":"heat"}`, `Everything: required fields "b", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f32", "f64", "s", "at", "every", "inner" are missing`},
		{"CelsiusPacked", `"21C"`, `Celsius is a go_type whose MessagePack form only its Go type github.com/ssgen/ssgen/internal/testkit/kinds/units.Celsius can write`},
		{"CelsiusText", `21`, `want the text of Celsius, got the number 21`},
	}
	for _, tt := range tests {
		c := keyCodec(t, s, tt.key)
		_, err := c.EncodeJSON([]byte(tt.input))
		if err == nil {
			t.Errorf("%s %s: encoded", tt.key, tt.input)
			continue
		}
		var se *schemaval.Error
		if !errors.As(err, &se) {
			t.Errorf("%s %s: %T is not a *schemaval.Error", tt.key, tt.input, err)
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.key, tt.input, got, tt.want)
		}
	}
}

func TestEncodeErrorsMatchErrEncode(t *testing.T) {
	_, err := keyCodec(t, kindsSchema(t), "Int8").EncodeJSON([]byte("300"))
	if !errors.Is(err, codec.ErrEncode) || errors.Is(err, codec.ErrDecode) {
		t.Errorf("%v: want codec.ErrEncode only", err)
	}
}

// Stored bytes the generated code would refuse are refused with a
// message naming the type and, for enums, the path.
func TestDecodeRefusesWhatGeneratedCodeRefuses(t *testing.T) {
	s := kindsSchema(t)
	tests := []struct {
		key  string
		data string
		want string // a part of the message
	}{
		{"Enum", "\xa4warm", `"warm" is not a Mode`},
		{"Enum", "\xa0", `does not decode as Mode (msgpack): empty string is not a declared enum value`},
		{"EnumText", "warm", `"warm" is not a Mode`},
		{"EnumJSON", `"warm"`, `"warm" is not a Mode`},
		{"List", "\x91\x81\xa4name\x01", `does not decode as []Inner (msgpack)`},
		{"List", "\x91\x81\xa4name", `does not decode as []Inner (msgpack)`},
		{"List", "\x90\x90", `does not decode as []Inner (msgpack)`},
		{"Packed", "\x82\xa4mode\xa4warm\xa5inner\x80", `.mode: "warm" is not a Mode`},
		{"Packed", "\x81\xa5modes\x92\xa4heat\xa3hot", `.modes[1]: "hot" is not a Mode`},
		{"JSON", `{"table":{"a":"x"}}`, `does not decode as Everything (json)`},
		{"Int8", "128", `"128" does not decode as int8 (string)`},
		{"Bool", "yes", `"yes" does not decode as bool (string)`},
		{"Time", "today", `"today" does not decode as time (string)`},
	}
	for _, tt := range tests {
		_, err := keyCodec(t, s, tt.key).Decode([]byte(tt.data))
		if err == nil {
			t.Errorf("%s %q: decoded", tt.key, tt.data)
			continue
		}
		if !errors.Is(err, codec.ErrDecode) {
			t.Errorf("%s %q: %v does not match codec.ErrDecode", tt.key, tt.data, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q: %v, want it to say %s", tt.key, tt.data, err, tt.want)
		}
	}
}

func TestDecodedJSONAndText(t *testing.T) {
	s := kindsSchema(t)
	tests := []struct {
		key, data string
		json      string
		text      string // "" when not a scalar
	}{
		{"Float64", "NaN", `"NaN"`, "NaN"},
		{"Float64", "-0", `-0`, "-0"},
		{"Float32", "0.1", `0.1`, "0.1"},
		{"PackedFloat", "\xca\x3d\xcc\xcc\xcd", `0.1`, "0.1"},
		{"Duration", "1h30m", `"1h30m0s"`, "1h30m0s"},
		{"JSONDuration", "90000000000", `"1m30s"`, "1m30s"},
		{"Time", "2026-01-02T03:04:05+02:00", `"2026-01-02T01:04:05Z"`, "2026-01-02T01:04:05Z"},
		{"JSONTime", `"2026-01-02T03:04:05+02:00"`, `"2026-01-02T03:04:05+02:00"`, "2026-01-02T03:04:05+02:00"},
		{"Raw", "\x00\xff", `"AP8="`, "AP8="},
		{"Str", "two words", `"two words"`, "two words"},
		{"Uint64", "18446744073709551615", `18446744073709551615`, "18446744073709551615"},
		{"PackedInt", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00", `-9223372036854775808`, "-9223372036854775808"},
		{"Plain", "\x82\xa4zeta\x01\xa5alpha\xa1a", `{"zeta":1,"alpha":"a"}`, ""},
		{"Plain", "\x81\xa5alpha\xa1a", `{"zeta":0,"alpha":"a"}`, ""}, // required fields always show
		{"List", "\xc0", `null`, ""},
		{"Map", `{"k":{"name":"n","weight":0}}`, `{"k":{"name":"n"}}`, ""}, // empty optional left out
		{"CelsiusJSON", `"21.5C"`, `"21.5C"`, ""},
		{"CelsiusText", "21.5C", `"21.5C"`, "21.5C"},
	}
	for _, tt := range tests {
		c := keyCodec(t, s, tt.key)
		v, err := c.Decode([]byte(tt.data))
		if err != nil {
			t.Errorf("%s %q: %v", tt.key, tt.data, err)
			continue
		}
		js, err := json.Marshal(v)
		if err != nil || string(js) != tt.json {
			t.Errorf("%s %q: JSON %s (%v), want %s", tt.key, tt.data, js, err, tt.json)
		}
		text, ok := schemaval.Text(v)
		if ok != (tt.text != "") || text != tt.text {
			t.Errorf("%s %q: Text %q %v, want %q", tt.key, tt.data, text, ok, tt.text)
		}
		if c.IsScalar() != (tt.text != "") {
			t.Errorf("%s: IsScalar %v", tt.key, c.IsScalar())
		}
	}
}

func TestParseInput(t *testing.T) {
	s := kindsSchema(t)
	tests := []struct {
		key, input string
		want       string // the stored bytes
	}{
		{"EnumText", `heat`, "heat"},
		{"EnumText", `"two words"`, "two words"},
		{"EnumText", `two words`, "two words"},
		{"Str", `21.5`, "21.5"},
		{"Str", `"quoted"`, "quoted"},
		{"Str", `"\"quoted\""`, `"quoted"`},
		{"Str", `null`, "null"},
		{"Str", `7`, "7"},
		{"Time", `2026-01-02T03:04:05Z`, "2026-01-02T03:04:05Z"},
		{"Duration", `90s`, "1m30s"},
		{"Duration", `90000000000`, "1m30s"},
		{"Float64", `21.5`, "21.5"},
		{"Int8", `-3`, "-3"},
		{"Bool", `true`, "true"},
		{"Raw", `AP8=`, "\x00\xff"},
		{"CelsiusText", `21.5C`, "21.5C"},
		{"EnumJSON", `cool`, `"cool"`},
		{"PlainJSON", `{"zeta":2,"alpha":"<b>"}`, `{"zeta":2,"alpha":"\u003cb\u003e"}`},
	}
	for _, tt := range tests {
		c := keyCodec(t, s, tt.key)
		v, err := c.ParseInput(tt.input)
		if err != nil {
			t.Errorf("%s %s: %v", tt.key, tt.input, err)
			continue
		}
		b, err := c.Encode(v)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s %s: %q (%v), want %q", tt.key, tt.input, b, err, tt.want)
		}
	}
}

// A recursive type is read and written to MaxDepth levels of itself, and
// refused beyond, on the way in and on the way out.
func TestRecursionIsBounded(t *testing.T) {
	c := keyCodec(t, kindsSchema(t), "JSON")
	nest := func(levels int) string {
		var b strings.Builder
		for range levels {
			b.WriteString(`{"mode":"heat","inner":{"name":""},` + minimalScalars + `,"self":`)
		}
		b.WriteString(`null`)
		b.WriteString(strings.Repeat("}", levels))
		return b.String()
	}
	ok := nest(schemaval.MaxDepth)
	data, err := c.EncodeJSON([]byte(ok))
	if err != nil {
		t.Fatalf("%d levels: %v", schemaval.MaxDepth, err)
	}
	if _, err := c.Decode(data); err != nil {
		t.Fatalf("%d levels: decode: %v", schemaval.MaxDepth, err)
	}
	deep := nest(schemaval.MaxDepth + 1)
	if _, err := c.EncodeJSON([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("%d levels: %v", schemaval.MaxDepth+1, err)
	}
	if _, err := c.Decode([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("%d levels: decode: %v", schemaval.MaxDepth+1, err)
	}
}
