package snapshot

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

func mustHLC(t testing.TB, s string) hlc.HLC {
	t.Helper()
	h, err := hlc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// sample has one of each kind of item.
func sample(t testing.TB) engine.Snapshot {
	return engine.Snapshot{
		Taken: time.Date(2024, 5, 1, 12, 0, 0, 500_000_000, time.UTC),
		Clock: mustHLC(t, "001714564800500:00003:StateStore"),
		Items: []engine.Item{
			{Key: "\x00\x01", Value: []byte{0xff}, Version: mustHLC(t, "001714564791000:00000:StateStore"), TTL: 29*time.Second + 500*time.Millisecond + 7, Persist: true},
			{Key: "a<b>&c", Value: []byte("line\nbreak\ttab \"quoted\" é"), Version: mustHLC(t, "001714564790000:00001:StateStore")},
			{Key: "ctl", Value: []byte("bell\a"), Version: mustHLC(t, "001714564790000:00002:StateStore")},
			{Key: "empty", Value: []byte{}, Version: mustHLC(t, "001714564790000:00003:StateStore")},
			{Key: "greeting", Value: []byte("hello"), Version: mustHLC(t, "001714564790000:00000:StateStore"), Fence: mustHLC(t, "001714564780000:00007:locker")},
		},
	}
}

const sampleFile = `{
  "format": "ssgen-snapshot",
  "version": 1,
  "taken": "2024-05-01T12:00:00.5Z",
  "clock": "001714564800500:00003:StateStore",
  "keys": [
    {"key":"AAE=","keyEncoding":"base64","value":"/w==","encoding":"base64","version":"001714564791000:00000:StateStore","ttl":"29.500000007s","persist":true},
    {"key":"a<b>&c","value":"line\nbreak\ttab \"quoted\" é","encoding":"text","version":"001714564790000:00001:StateStore"},
    {"key":"ctl","value":"YmVsbAc=","encoding":"base64","version":"001714564790000:00002:StateStore"},
    {"key":"empty","value":"","encoding":"text","version":"001714564790000:00003:StateStore"},
    {"key":"greeting","value":"hello","encoding":"text","version":"001714564790000:00000:StateStore","fencingToken":"001714564780000:00007:locker"}
  ]
}
`

func TestWriteIsTheDocumentedLayout(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample(t)); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != sampleFile {
		t.Fatalf("Write wrote\n%s\nwant\n%s", got, sampleFile)
	}
}

func TestWriteEmptyStore(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, engine.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"format\": \"ssgen-snapshot\",\n  \"version\": 1,\n  \"keys\": []\n}\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	s, err := Read(&b, Limits{})
	if err != nil || s.Items == nil || len(s.Items) != 0 {
		t.Fatalf("read back %+v, %v", s, err)
	}
}

func TestReadWhatWriteWrote(t *testing.T) {
	want := sample(t)
	var b bytes.Buffer
	if err := Write(&b, want); err != nil {
		t.Fatal(err)
	}
	for _, wrap := range []struct {
		name string
		f    func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"halves", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	} {
		got, err := Read(wrap.f(bytes.NewReader(b.Bytes())), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", wrap.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read\n%+v\nwant\n%+v", wrap.name, got, want)
		}
	}
}

func TestReadFixture(t *testing.T) {
	f, err := os.Open("testdata/fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Read(f, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 4 || !s.Clock.IsZero() || !s.Taken.IsZero() {
		t.Fatalf("%+v", s)
	}
	job := s.Items[2]
	if job.Key != "jobs/nightly" || job.TTL != 30*time.Second || job.Fence.Node != "worker-1" || job.Version.Wall != 1714564800000 {
		t.Errorf("jobs/nightly: %+v", job)
	}
	if !s.Items[0].Version.IsZero() || string(s.Items[0].Value) != "hello" {
		t.Errorf("greeting: %+v", s.Items[0])
	}
	if !s.Items[1].Persist || s.Items[1].Value[0] != 0x82 {
		t.Errorf("setPoint: %+v", s.Items[1])
	}
	if s.Items[3].Key != "\x00\xff" || len(s.Items[3].Value) != 0 {
		t.Errorf("binary key: %+v", s.Items[3])
	}
}

func TestReadRefusesBadFiles(t *testing.T) {
	const head = `{"format":"ssgen-snapshot","version":1,"keys":[`
	entry := func(s string) string { return head + `{"key":"ok","value":"v"},` + s + "]}" }
	cases := []struct {
		name, in string
		item     int    // the ItemError's index, -1: none
		want     string // in the message
	}{
		{"empty input", "", -1, "ends early"},
		{"not an object", `[]`, -1, "want a JSON object at byte 1, found \"[\""},
		{"syntax", `{"format":"ssgen-snapshot",}`, -1, "JSON syntax at byte"},
		{"truncated", head + `{"key":"a","val`, -1, "ends early"},
		{"trailing data", head + `]} {}`, -1, "more data after the snapshot"},
		{"trailing garbage", head + `]} x`, -1, "invalid character"},
		{"other format", `{"format":"other","version":1,"keys":[]}`, -1, `"format" is "other", not "ssgen-snapshot"`},
		{"later version", `{"format":"ssgen-snapshot","version":2,"keys":[]}`, -1, "version 2; this ssgen reads version 1"},
		{"version as string", `{"format":"ssgen-snapshot","version":"1","keys":[]}`, -1, "cannot unmarshal string"},
		{"fractional version", `{"format":"ssgen-snapshot","version":1.5,"keys":[]}`, -1, "cannot unmarshal number 1.5"},
		{"no format", `{"version":1,"keys":[]}`, -1, `"format" is missing`},
		{"no version", `{"format":"ssgen-snapshot","keys":[]}`, -1, `"version" is missing`},
		{"no keys", `{"format":"ssgen-snapshot","version":1}`, -1, `"keys" is missing`},
		{"keys not an array", `{"format":"ssgen-snapshot","version":1,"keys":{}}`, -1, `want "keys" to be an array`},
		{"unknown field", `{"format":"ssgen-snapshot","version":1,"keys":[],"extra":1}`, -1, `unknown field "extra"`},
		{"repeated field", `{"format":"ssgen-snapshot","version":1,"keys":[],"keys":[]}`, -1, `field "keys" appears twice`},
		{"bad taken", `{"format":"ssgen-snapshot","version":1,"taken":"yesterday","keys":[]}`, -1, `"taken" "yesterday"`},
		{"bad clock", `{"format":"ssgen-snapshot","version":1,"clock":"noon","keys":[]}`, -1, `"clock" "noon"`},
		{"invalid UTF-8", head + `{"key":"a","value":"` + "\xff" + `"}]}`, -1, "not UTF-8"},
		{"truncated UTF-8 at the end", head + `{"key":"a","value":"` + "\xe2\x82", -1, "not UTF-8"},
		{"bad UTF-8 continuation", head + `{"key":"a","value":"` + "\xe2\x82A" + `"}]}`, -1, "not UTF-8"},
		{"UTF-8 surrogate", head + `{"key":"a","value":"` + "\xed\xa0\x80" + `"}]}`, -1, "not UTF-8"},
		{"entry not an object", entry(`"x"`), 1, `keys[1]: want an object with "key" and "value", not a JSON string`},
		{"unknown entry field", entry(`{"key":"a","value":"v","kye":"b"}`), 1, `keys[1]: unknown field "kye"`},
		{"value a number", entry(`{"key":"a","value":5}`), 1, `keys[1]: "value": want a string, not a JSON number`},
		{"persist a string", entry(`{"key":"a","value":"","persist":"yes"}`), 1, `"persist": want a bool`},
		{"no key", entry(`{"value":"v"}`), 1, `keys[1]: "key" is missing`},
		{"null key", entry(`{"key":null,"value":"v"}`), 1, `"key" is missing`},
		{"empty key", entry(`{"key":"","value":"v"}`), 1, "the key length is zero"},
		{"empty base64 key", entry(`{"key":"","keyEncoding":"base64","value":"v"}`), 1, "the key length is zero"},
		{"no value", entry(`{"key":"a"}`), 1, `keys[1] (key "a"): "value" is missing`},
		{"bad encoding", entry(`{"key":"a","value":"v","encoding":"hex"}`), 1, `"encoding" "hex": want "text" or "base64"`},
		{"bad key encoding", entry(`{"key":"a","keyEncoding":"Base64","value":"v"}`), 1, `"keyEncoding" "Base64"`},
		{"bad base64", entry(`{"key":"a","value":"!!","encoding":"base64"}`), 1, `"value" is not standard padded base64`},
		{"unpadded base64", entry(`{"key":"a","value":"AAE","encoding":"base64"}`), 1, "not standard padded base64"},
		{"non-canonical base64", entry(`{"key":"a","value":"AAF=","encoding":"base64"}`), 1, "not standard padded base64"},
		{"url base64", entry(`{"key":"a","value":"_w==","encoding":"base64"}`), 1, "not standard padded base64"},
		{"bad version", entry(`{"key":"a","value":"v","version":"1:2"}`), 1, `"version" "1:2": want an HLC`},
		{"zero version", entry(`{"key":"a","value":"v","version":"0:0:"}`), 1, `the zero HLC is no version`},
		{"bad fence", entry(`{"key":"a","value":"v","fencingToken":"x"}`), 1, `"fencingToken" "x"`},
		{"bad ttl", entry(`{"key":"a","value":"v","ttl":"30"}`), 1, `"ttl" "30": want a duration`},
		{"zero ttl", entry(`{"key":"a","value":"v","ttl":"0s"}`), 1, `"ttl" "0s": must be positive`},
		{"negative ttl", entry(`{"key":"a","value":"v","ttl":"-1s"}`), 1, "must be positive"},
		{"binary key in the message", entry(`{"key":"AAE=","keyEncoding":"base64","value":"v","ttl":"x"}`), 1, `keys[1] (key base64:AAE=)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), Limits{})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %q, want it to contain %q", err, tc.want)
			}
			var ie *engine.ItemError
			if got := errors.As(err, &ie); got != (tc.item >= 0) || got && ie.Index != tc.item {
				t.Errorf("err %v: item error %v, want item %d", err, ie, tc.item)
			}
			if strings.ContainsAny(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
			// The same through one-byte reads.
			_, err2 := Read(iotest.OneByteReader(strings.NewReader(tc.in)), Limits{})
			if err2 == nil || err2.Error() != err.Error() && !strings.Contains(tc.name, "UTF-8") {
				t.Errorf("one byte at a time: %v, whole: %v", err2, err)
			}
		})
	}
}

func TestReadStopsAtTheLimits(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample(t)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lim  Limits
		want string
	}{
		{Limits{MaxKeys: 4}, "more than 4 keys"},
		{Limits{MaxBytes: 40}, "more than 40 bytes"},
	} {
		_, err := Read(bytes.NewReader(b.Bytes()), tc.lim)
		if !errors.Is(err, engine.ErrQuotaExceeded) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.lim, err)
		}
	}
	if _, err := Read(bytes.NewReader(b.Bytes()), Limits{MaxKeys: 5, MaxBytes: 1000}); err != nil {
		t.Errorf("within the limits: %v", err)
	}
}

// failWriter fails every write after n bytes.
type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errDisk
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteReportsWriteErrors(t *testing.T) {
	s := sample(t)
	for i := 0; i < 10; i++ {
		s.Items = append(s.Items, engine.Item{Key: strings.Repeat("k", 100) + string(rune('a'+i)), Value: bytes.Repeat([]byte("v"), 10_000)})
	}
	if err := Write(&failWriter{n: 1000}, s); !errors.Is(err, errDisk) {
		t.Fatalf("err %v, want the writer's", err)
	}
}
