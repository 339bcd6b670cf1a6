package snapshot

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/ssgen/ssgen/server/engine"
)

// FuzzRead feeds Read arbitrary bytes. It must never panic; it must give
// the same answer whether the bytes come whole or one at a time (the UTF-8
// check straddles reads); every error wraps ErrInvalid (no limits are
// set); and what it accepts must survive Write and Read unchanged.
func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	if err := Write(&b, sample(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	fixture, err := os.ReadFile("testdata/fixture.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	for _, s := range []string{
		`{"format":"ssgen-snapshot","version":1,"keys":[]}`,
		`{"keys":[{"key":"a","value":"b"}],"version":1,"format":"ssgen-snapshot"}`,
		`{"format":"ssgen-snapshot","version":1,"clock":"1:2:n","taken":"2024-01-01T00:00:00Z","keys":[{"key":"é","value":"\u00e9\n","ttl":"1h","persist":false}]}`,
		`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"AA==","keyEncoding":"base64","value":"","encoding":"base64","version":"1:0:x","fencingToken":"2:0:y"}]}`,
		"{\"format\":\"ssgen-snapshot\",\"version\":1,\"keys\":[{\"key\":\"\xe2\x82\xac\",\"value\":\"\xf0\x9f\x98\x80\"}]}",
		`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"a","value":"b"},{"key":"a","value":"c"}]}`,
		`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"a","value":"\ud800"}]}`,
		`{"format":"ssgen-snapshot","version":1,"keys":[{"key":"a","value":"v","ttl":"9223372036854775807ns"}]}`,
		"{\"format\":\"ssgen-snapshot\",\"version\":1,\"keys\":[{\"key\":\"\xff\",\"value\":\"v\"}]}",
		`[1, 2]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data), Limits{})
		s1, err1 := Read(iotest.OneByteReader(bytes.NewReader(data)), Limits{})
		if (err == nil) != (err1 == nil) {
			t.Fatalf("whole: %v; one byte at a time: %v", err, err1)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !reflect.DeepEqual(s, s1) {
			t.Fatalf("whole %+v, one byte at a time %+v", s, s1)
		}
		var out bytes.Buffer
		if err := Write(&out, s); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out, Limits{})
		if err != nil {
			t.Fatalf("reading what Write wrote: %v\n%s", err, out.Bytes())
		}
		normalize := func(s engine.Snapshot) engine.Snapshot {
			// Taken is written in UTC: the same instant, maybe another zone.
			if !s.Taken.IsZero() {
				s.Taken = s.Taken.UTC()
			}
			for i := range s.Items {
				if len(s.Items[i].Value) == 0 {
					s.Items[i].Value = []byte{}
				}
			}
			return s
		}
		if a, b := normalize(s), normalize(back); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the snapshot:\n%+v\n%+v", a, b)
		}
	})
}
