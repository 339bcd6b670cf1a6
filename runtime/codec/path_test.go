package codec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/runtime/codec"
)

// lineState is shaped like a generated enum: it checks its value in every
// encoding.
type lineState string

var errUndeclared = errors.New("not a declared value")

func (s lineState) check() error {
	if s != "run" && s != "stop" {
		return fmt.Errorf("%q is %w of enum LineState", string(s), errUndeclared)
	}
	return nil
}

func (s lineState) MarshalText() ([]byte, error) { return []byte(s), s.check() }

func (s *lineState) UnmarshalText(b []byte) error {
	if err := lineState(b).check(); err != nil {
		return err
	}
	*s = lineState(b)
	return nil
}

func (s lineState) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := s.check(); err != nil {
		return err
	}
	return enc.EncodeString(string(s))
}

func (s *lineState) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeString()
	if err != nil {
		return err
	}
	return s.UnmarshalText([]byte(v))
}

type station struct {
	Name  string    `msgpack:"name" json:"name"`
	State lineState `msgpack:"state" json:"state"`
}

type base struct {
	Owner lineState `msgpack:"owner" json:"owner"`
}

type lineConfig struct {
	base
	Speed       float64              `msgpack:"speed" json:"speed"`
	TargetState lineState            `msgpack:"target_state" json:"target_state"`
	Fallback    lineState            `msgpack:"fallback,omitempty" json:"fallback,omitempty"`
	Stations    []station            `msgpack:"stations,omitempty" json:"stations,omitempty"`
	Zones       map[string]lineState `msgpack:"zones,omitempty" json:"zones,omitempty"`
	Next        *lineConfig          `msgpack:"next,omitempty" json:"next,omitempty"`
}

func goodLine() lineConfig {
	return lineConfig{base: base{Owner: "run"}, Speed: 1, TargetState: "run"}
}

func TestErrorsNameTheFieldPath(t *testing.T) {
	cases := []struct {
		name string
		edit func(*lineConfig)
		path string
		msg  string
	}{
		{"field", func(l *lineConfig) { l.TargetState = "" }, "lineConfig.target_state", `"" is not a declared value of enum LineState`},
		{"embedded", func(l *lineConfig) { l.Owner = "x" }, "lineConfig.owner", `"x" is not a declared value of enum LineState`},
		{"slice element field", func(l *lineConfig) {
			l.Stations = []station{{Name: "a", State: "run"}, {Name: "b", State: "jam"}}
		}, "lineConfig.stations[1].state", `"jam" is not a declared value of enum LineState`},
		{"map value", func(l *lineConfig) {
			l.Zones = map[string]lineState{"a": "run", "north": "?"}
		}, `lineConfig.zones["north"]`, `"?" is not a declared value of enum LineState`},
		{"through a pointer", func(l *lineConfig) {
			n := goodLine()
			n.Stations = []station{{State: "off"}}
			l.Next = &n
		}, "lineConfig.next.stations[0].state", `"off" is not a declared value of enum LineState`},
	}
	type codecCase struct {
		name   string
		encode func(lineConfig) ([]byte, error)
		decode func([]byte) error
		// raw writes a value the codec refuses, bypassing its checks.
		raw func(any) []byte
	}
	codecs := []codecCase{
		{"msgpack", codec.MsgPack[lineConfig]{}.Encode, func(b []byte) error { _, err := codec.MsgPack[lineConfig]{}.Decode(b); return err },
			func(v any) []byte { b, _ := msgpack.Marshal(v); return b }},
		{"json", codec.JSON[lineConfig]{}.Encode, func(b []byte) error { _, err := codec.JSON[lineConfig]{}.Decode(b); return err },
			func(v any) []byte { b, _ := json.Marshal(v); return b }},
	}
	for _, cc := range codecs {
		for _, c := range cases {
			t.Run(cc.name+"/"+c.name, func(t *testing.T) {
				v := goodLine()
				c.edit(&v)
				_, err := cc.encode(v)
				var ee *codec.EncodeError
				if !errors.As(err, &ee) || ee.Path != c.path || !errors.Is(err, errUndeclared) {
					t.Fatalf("encode: %v (%#v); want path %s and the enum's own error", err, ee, c.path)
				}
				want := "codec: " + cc.name + ": cannot encode codec_test.lineConfig: " + c.path + ": " + c.msg
				if err.Error() != want {
					t.Errorf("encode error\n%s\nwant\n%s", err, want)
				}

				err = cc.decode(cc.raw(plain(v)))
				var de *codec.DecodeError
				if !errors.As(err, &de) || de.Path != c.path || !errors.Is(err, errUndeclared) {
					t.Fatalf("decode: %v (%#v); want path %s and the enum's own error", err, de, c.path)
				}
				if want := strings.Replace(want, "encode", "decode", 1); err.Error() != want {
					t.Errorf("decode error\n%s\nwant\n%s", err, want)
				}
			})
		}
	}
}

// plain is v with its enums as plain strings, so the standard encoders
// write what the checked ones refuse.
func plain(v lineConfig) any {
	type plainStation struct {
		Name  string `msgpack:"name" json:"name"`
		State string `msgpack:"state" json:"state"`
	}
	m := map[string]any{"owner": string(v.Owner), "speed": v.Speed, "target_state": string(v.TargetState)}
	if len(v.Stations) > 0 {
		var ss []plainStation
		for _, s := range v.Stations {
			ss = append(ss, plainStation{s.Name, string(s.State)})
		}
		m["stations"] = ss
	}
	if len(v.Zones) > 0 {
		z := map[string]string{}
		for k, s := range v.Zones {
			z[k] = string(s)
		}
		m["zones"] = z
	}
	if v.Next != nil {
		m["next"] = plain(*v.Next)
	}
	return m
}

func TestErrorsWithoutAPartHaveNoPath(t *testing.T) {
	// A top-level enum, bytes that are no value, a value of the wrong
	// kind: the value fails as a whole.
	_, err := codec.MsgPack[lineState]{}.Encode("nope")
	if ee := (*codec.EncodeError)(nil); !errors.As(err, &ee) || ee.Path != "" || !errors.Is(err, errUndeclared) {
		t.Fatalf("top-level enum: %v", err)
	}
	for _, data := range [][]byte{{0xc1}, {0x93, 1, 2, 3}} {
		_, err := codec.MsgPack[lineConfig]{}.Decode(data)
		if de := (*codec.DecodeError)(nil); !errors.As(err, &de) || de.Path != "" {
			t.Fatalf("decode %x: %v; want no path", data, err)
		}
	}
	_, err = codec.JSON[lineConfig]{}.Decode([]byte(`[1]`))
	if de := (*codec.DecodeError)(nil); !errors.As(err, &de) || de.Path != "" {
		t.Fatalf("decode of an array into a struct: %v; want no path", err)
	}
	// A member of the wrong type is a part.
	_, err = codec.JSON[lineConfig]{}.Decode([]byte(`{"speed":"fast","target_state":"run","owner":"run"}`))
	if de := (*codec.DecodeError)(nil); !errors.As(err, &de) || de.Path != "lineConfig.speed" {
		t.Fatalf("a string for a float: %v; want path lineConfig.speed", err)
	}
	// An unnamed type's path starts at its index.
	_, err = codec.MsgPack[[]station]{}.Encode([]station{{State: "run"}, {State: "x"}})
	if ee := (*codec.EncodeError)(nil); !errors.As(err, &ee) || ee.Path != "[1].state" {
		t.Fatalf("slice: %v; want path [1].state", err)
	}
}

// Data nested far deeper than any path is worth: the walk stops at its
// depth bound and reports the path so far, without re-reading the data
// once per level.
func TestDeepDataGivesABoundedPath(t *testing.T) {
	const depth = 5000
	data := []byte(`{"owner":"bad"}`)
	for range depth {
		data = append(append([]byte(`{"owner":"run","speed":1,"target_state":"run","next":`), data...), '}')
	}
	_, err := codec.JSON[lineConfig]{}.Decode(data)
	var de *codec.DecodeError
	if !errors.As(err, &de) || !strings.HasPrefix(de.Path, "lineConfig.next.next.") || strings.Count(de.Path, ".next") > 40 {
		t.Fatalf("deep data: path %q, %v", pathOf(de), err)
	}
}

func pathOf(de *codec.DecodeError) string {
	if de == nil {
		return "<no DecodeError>"
	}
	return de.Path
}

// FuzzDecodeErrorPath decodes arbitrary bytes into a struct with enums,
// nested structs, slices, maps and a recursive pointer, in both encodings:
// finding where a decode failed must never panic, and a path it reports
// starts at the type's name.
func FuzzDecodeErrorPath(f *testing.F) {
	bad := goodLine()
	bad.Stations = []station{{Name: "a", State: "jam"}}
	bad.Zones = map[string]lineState{"n": "?"}
	for _, v := range []any{plain(goodLine()), plain(bad), map[string]any{"next": map[string]any{"owner": 3}}} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
		j, _ := json.Marshal(v)
		f.Add(j)
	}
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte(`{"stations":[{"state":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) error{
			func(b []byte) error { _, err := codec.MsgPack[lineConfig]{}.Decode(b); return err },
			func(b []byte) error { _, err := codec.JSON[lineConfig]{}.Decode(b); return err },
		} {
			var de *codec.DecodeError
			if err := decode(data); errors.As(err, &de) && de.Path != "" && !strings.HasPrefix(de.Path, "lineConfig.") {
				t.Fatalf("path %q does not start at the type", de.Path)
			}
		}
	})
}
