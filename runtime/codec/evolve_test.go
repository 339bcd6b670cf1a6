package codec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/runtime/codec"
)

// The current types of a schema whose earlier version named celsius
// "temp" (and, before that, "tempC"), had no enabled, hold or window, and
// had a field "legacy" since removed.
type evZone struct {
	Name    string  `msgpack:"name" json:"name"`
	Celsius float64 `msgpack:"celsius" json:"celsius"`
	Enabled bool    `msgpack:"enabled" json:"enabled"`
}

type evWindow struct {
	From int `msgpack:"from" json:"from"`
	To   int `msgpack:"to" json:"to"`
}

type evSetPoint struct {
	Celsius float64           `msgpack:"celsius" json:"celsius"`
	Zones   []evZone          `msgpack:"zones" json:"zones"`
	ByRoom  map[string]evZone `msgpack:"byRoom" json:"byRoom"`
	Hold    time.Duration     `msgpack:"hold" json:"hold"`
	Window  evWindow          `msgpack:"window" json:"window"`
	Tags    map[string]int    `msgpack:"tags" json:"tags"`
}

// The earlier types, as the earlier generated code declared them.
type oldZone struct {
	Name string  `msgpack:"name" json:"name"`
	Temp float64 `msgpack:"temp" json:"temp"`
}

type oldSetPoint struct {
	Temp   float64            `msgpack:"temp" json:"temp"`
	Zones  []oldZone          `msgpack:"zones" json:"zones"`
	ByRoom map[string]oldZone `msgpack:"byRoom" json:"byRoom"`
	Legacy string             `msgpack:"legacy" json:"legacy"`
}

var evolution = &codec.Evolution{Structs: map[string]codec.StructEvolution{
	"Zone": {Fields: []codec.FieldEvolution{
		{Name: "celsius", RenamedFrom: []string{"temp"}},
		{Name: "enabled", Default: "true"},
	}},
	"SetPoint": {Fields: []codec.FieldEvolution{
		{Name: "celsius", RenamedFrom: []string{"temp", "tempC"}},
		{Name: "zones", Type: "[]Zone"},
		{Name: "byRoom", Type: "map[string]Zone"},
		{Name: "hold", Default: "90000000000"},
		{Name: "window", Default: `{"from":8,"to":17}`},
		{Name: "tags", Default: `{"b":2,"a":1}`},
	}},
}}

func evCodecs() map[string]codec.Codec[evSetPoint] {
	return map[string]codec.Codec[evSetPoint]{
		"msgpack": codec.Evolved[evSetPoint]{Codec: codec.MsgPack[evSetPoint]{}, Evolution: evolution, Type: "SetPoint"},
		"json":    codec.Evolved[evSetPoint]{Codec: codec.JSON[evSetPoint]{}, Evolution: evolution, Type: "SetPoint"},
	}
}

func encodeAs(t *testing.T, format string, v any) []byte {
	t.Helper()
	var b []byte
	var err error
	if format == "json" {
		b, err = json.Marshal(v)
	} else {
		b, err = msgpack.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var defaultsOnly = evSetPoint{Hold: 90 * time.Second, Window: evWindow{8, 17}, Tags: map[string]int{"a": 1, "b": 2}}

func TestEvolvedReadsEarlierForms(t *testing.T) {
	for format, c := range evCodecs() {
		for _, tc := range []struct {
			name   string
			stored any
			want   evSetPoint
		}{{
			name:   "renamed fields at every depth, removed field ignored, defaults filled",
			stored: oldSetPoint{Temp: 21.5, Legacy: "x", Zones: []oldZone{{"n", 19}}, ByRoom: map[string]oldZone{"hall": {"hall", 18}}},
			want: func() evSetPoint {
				w := defaultsOnly
				w.Celsius = 21.5
				w.Zones = []evZone{{"n", 19, true}}
				w.ByRoom = map[string]evZone{"hall": {"hall", 18, true}}
				return w
			}(),
		}, {
			name:   "an older name still",
			stored: map[string]any{"tempC": 7.5},
			want:   func() evSetPoint { w := defaultsOnly; w.Celsius = 7.5; return w }(),
		}, {
			name:   "the current name wins over an earlier one, wherever it is",
			stored: []any{"temp", 1.0, "celsius", 2.0, "tempC", 3.0},
			want:   func() evSetPoint { w := defaultsOnly; w.Celsius = 2; return w }(),
		}, {
			name:   "the last earlier name wins, as the last of a repeated name does",
			stored: []any{"tempC", 3.0, "temp", 1.0, "temp", 4.0},
			want:   func() evSetPoint { w := defaultsOnly; w.Celsius = 4; return w }(),
		}, {
			name:   "the current name wins when it comes first too",
			stored: []any{"celsius", 2.0, "temp", 1.0},
			want:   func() evSetPoint { w := defaultsOnly; w.Celsius = 2; return w }(),
		}, {
			name:   "unknown and removed members, and escaped names",
			stored: []any{"legacy", "x", "temp", 5.0, "zones", []any{map[string]any{"temp": 6.0, "x": []any{1, "]"}}}},
			want: func() evSetPoint {
				w := defaultsOnly
				w.Celsius = 5
				w.Zones = []evZone{{Celsius: 6, Enabled: true}}
				return w
			}(),
		}, {
			name:   "a present zero is kept, not defaulted",
			stored: evSetPoint{Zones: []evZone{}},
			want:   evSetPoint{Zones: []evZone{}},
		}, {
			name:   "nil lists and maps of evolving structs",
			stored: map[string]any{"zones": nil, "byRoom": nil, "hold": 1},
			want:   evSetPoint{Hold: 1, Window: evWindow{8, 17}, Tags: map[string]int{"a": 1, "b": 2}},
		}} {
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				var data []byte
				if pairs, ok := tc.stored.([]any); ok {
					data = orderedMap(t, format, pairs)
				} else {
					data = encodeAs(t, format, tc.stored)
				}
				got, err := c.Decode(data)
				if err != nil {
					t.Fatalf("Decode(%q): %v", data, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("Decode:\n got %+v\nwant %+v", got, tc.want)
				}
			})
		}
	}
}

// orderedMap encodes a map whose entries keep the given order (and may
// repeat a member, as stored bytes from another writer might).
func orderedMap(t *testing.T, format string, pairs []any) []byte {
	t.Helper()
	var b bytes.Buffer
	if format == "json" {
		b.WriteByte('{')
		for i := 0; i < len(pairs); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(encodeAs(t, "json", pairs[i]))
			b.WriteByte(':')
			b.Write(encodeAs(t, "json", pairs[i+1]))
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	enc := msgpack.NewEncoder(&b)
	if err := enc.EncodeMapLen(len(pairs) / 2); err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// Encoding is the wrapped codec's, byte for byte: values compared by the
// state store or CompareAndSet stay deterministic.
func TestEvolvedEncodesAsItsCodec(t *testing.T) {
	v := evSetPoint{Celsius: 1, Tags: map[string]int{"z": 1, "a": 2, "m": 3}, ByRoom: map[string]evZone{"b": {}, "a": {}}}
	for format, c := range evCodecs() {
		var inner codec.Codec[evSetPoint] = codec.MsgPack[evSetPoint]{}
		if format == "json" {
			inner = codec.JSON[evSetPoint]{}
		}
		a, err := c.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := inner.Encode(v)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: Evolved encodes %q, its codec %q", format, a, b)
		}
		if c.ContentType() != inner.ContentType() {
			t.Errorf("%s: content type %q", format, c.ContentType())
		}
	}
}

// Current gives the bytes an earlier form encodes to today, which is
// what CompareAndSet compares a stored value with.
func TestEvolvedCurrentRewritesEarlierForms(t *testing.T) {
	for format, c := range evCodecs() {
		old := encodeAs(t, format, oldSetPoint{Temp: 3})
		cur, err := c.(codec.Upgrader).Current(old)
		if err != nil {
			t.Fatal(err)
		}
		want := defaultsOnly
		want.Celsius = 3
		wantB, _ := c.Encode(want)
		if !bytes.Equal(cur, wantB) {
			t.Errorf("%s: Current = %q, want %q", format, cur, wantB)
		}
	}
}

// Bytes that are not one well-formed value fail exactly as the wrapped
// codec fails on them.
func TestEvolvedRefusesWhatItsCodecRefuses(t *testing.T) {
	for _, tc := range []struct {
		format string
		data   []byte
	}{
		{"msgpack", []byte{0x81, 0xa4, 't', 'e', 'm', 'p'}},           // truncated map
		{"msgpack", append(encodeAs(t, "msgpack", oldSetPoint{}), 0)}, // trailing byte
		{"json", []byte(`{"temp": 1`)},
		{"json", []byte(`[1]`)},
	} {
		c := evCodecs()[tc.format]
		_, err := c.Decode(tc.data)
		var inner codec.Codec[evSetPoint] = codec.MsgPack[evSetPoint]{}
		if tc.format == "json" {
			inner = codec.JSON[evSetPoint]{}
		}
		_, innerErr := inner.Decode(tc.data)
		if err == nil {
			t.Errorf("%s %q: decoded", tc.format, tc.data)
			continue
		}
		if !errors.Is(err, codec.ErrDecode) || innerErr == nil || err.Error() != innerErr.Error() {
			t.Errorf("%s %q: error %q, the codec's %v", tc.format, tc.data, err, innerErr)
		}
	}
}

// JSON member names match as encoding/json matches them: after
// unescaping, and case-insensitively.
func TestEvolvedJSONMatchesNamesAsEncodingJSON(t *testing.T) {
	c := evCodecs()["json"]
	for data, want := range map[string]float64{
		`{"t\u0065mp": 5}`:                  5,
		`{"TEMP": 6}`:                       6,
		` { "Celsius" : 7 , "temp":1 } `:    7,
		`{"zones":[],"temp":[1,{"a":"}"}]}`: 0, // a mistyped value fails below
	} {
		got, err := c.Decode([]byte(data))
		if want == 0 {
			if err == nil {
				t.Errorf("%s: decoded %+v", data, got)
			}
			continue
		}
		if err != nil || got.Celsius != want {
			t.Errorf("%s: %+v, %v; want celsius %v", data, got, err, want)
		}
	}
}

// A value under an earlier name that does not fit the field fails as
// the field does, named by its current name.
func TestEvolvedNamesTheCurrentFieldOfAMistypedValue(t *testing.T) {
	for format, data := range map[string][]byte{
		"msgpack": {0x81, 0xa4, 't', 'e', 'm', 'p', 0xa1, 'x'},
		"json":    []byte(`{"temp": "x"}`),
	} {
		_, err := evCodecs()[format].Decode(data)
		var de *codec.DecodeError
		if !errors.As(err, &de) || de.Path != "evSetPoint.celsius" {
			t.Errorf("%s: %v, want a *DecodeError at evSetPoint.celsius", format, err)
		}
	}
}

func FuzzEvolvedMsgPack(f *testing.F) {
	for _, v := range []any{oldSetPoint{Temp: 1, Zones: []oldZone{{}}, ByRoom: map[string]oldZone{"a": {}}}, evSetPoint{}, map[string]any{"tempC": 1}, 1, nil} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Add(deepMsgPack(codec.MaxDepth, "zones")) // past MaxDepth (issue #27)
	c := evCodecs()["msgpack"]
	f.Fuzz(func(t *testing.T, data []byte) { roundTrips(t, c, data) })
}

func FuzzEvolvedJSON(f *testing.F) {
	for _, s := range []string{`{"temp":1,"zones":[{"temp":2}],"byRoom":{"a":{"TEMP":3}}}`, `{"celsius":1,"temp":2}`, `null`, `[]`, `{"tempC":1e400}`} {
		f.Add([]byte(s))
	}
	f.Add(deepJSON(codec.MaxDepth, "zones")) // past MaxDepth (issue #27)
	c := evCodecs()["json"]
	f.Fuzz(func(t *testing.T, data []byte) { roundTrips(t, c, data) })
}

// roundTrips checks that decoding never panics and that a value decoded
// from any bytes encodes to bytes that decode to the same value again
// (compared by encoding: a NaN is not equal to itself).
func roundTrips(t *testing.T, c codec.Codec[evSetPoint], data []byte) {
	v, err := c.Decode(data)
	if err != nil {
		return
	}
	b, err := c.Encode(v)
	if err != nil {
		return // a NaN from msgpack, say: not JSON's business here
	}
	w, err := c.Decode(b)
	if err != nil {
		t.Fatalf("re-decode of %q: %v", b, err)
	}
	if b2, err := c.Encode(w); err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("round trip changed the value:\n%+v\n%+v", v, w)
	}
}

// BenchmarkEvolvedDecode compares reading a value through Evolved with
// the wrapped codec alone: the current form (the cost every read pays)
// and an earlier form (renamed fields, defaults to fill).
func BenchmarkEvolvedDecode(b *testing.B) {
	cur := evSetPoint{Celsius: 21.5, Zones: []evZone{{"n", 19, true}, {"s", 23, false}}, ByRoom: map[string]evZone{"hall": {"hall", 18, true}},
		Hold: time.Minute, Window: evWindow{1, 2}, Tags: map[string]int{"a": 1}}
	old := oldSetPoint{Temp: 21.5, Zones: []oldZone{{"n", 19}, {"s", 23}}, ByRoom: map[string]oldZone{"hall": {"hall", 18}}, Legacy: "x"}
	for format, c := range evCodecs() {
		var inner codec.Codec[evSetPoint] = codec.MsgPack[evSetPoint]{}
		enc := msgpack.Marshal
		if format == "json" {
			inner, enc = codec.JSON[evSetPoint]{}, json.Marshal
		}
		curB, _ := inner.Encode(cur)
		oldB, _ := enc(old)
		for _, r := range []struct {
			name string
			c    codec.Codec[evSetPoint]
			data []byte
		}{{"plain/current", inner, curB}, {"evolved/current", c, curB}, {"evolved/earlier", c, oldB}} {
			b.Run(format+"/"+r.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(r.data)))
				for b.Loop() {
					if _, err := r.c.Decode(r.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
