package codec

import (
	"bytes"
	"errors"
	"testing"
)

type vOld struct {
	Fahrenheit float64 `msgpack:"fahrenheit" json:"fahrenheit"`
}

type vNew struct {
	Celsius float64 `msgpack:"celsius" json:"celsius"`
}

func versionedCodec(json bool, write int) Versioned[vNew] {
	dec1 := func(data []byte) (vNew, error) {
		var o vOld
		var err error
		if json {
			o, err = JSON[vOld]{}.Decode(data)
		} else {
			o, err = MsgPack[vOld]{}.Decode(data)
		}
		return vNew{Celsius: (o.Fahrenheit - 32) * 5 / 9}, err
	}
	dec2 := func(data []byte) (vNew, error) {
		if json {
			return JSON[vNew]{}.Decode(data)
		}
		return MsgPack[vNew]{}.Decode(data)
	}
	enc := func(v vNew) ([]byte, error) {
		if write == 1 {
			o := vOld{Fahrenheit: v.Celsius*9/5 + 32}
			if json {
				return JSON[vOld]{}.Encode(o)
			}
			return MsgPack[vOld]{}.Encode(o)
		}
		if json {
			return JSON[vNew]{}.Encode(v)
		}
		return MsgPack[vNew]{}.Encode(v)
	}
	return Versioned[vNew]{Name: "SetPoint", JSON: json, Write: write, Oldest: 1, EncodeAs: enc,
		Decoders: map[int]func([]byte) (vNew, error){1: dec1, 2: dec2}}
}

func TestVersionedRoundTrip(t *testing.T) {
	for _, json := range []bool{false, true} {
		for _, write := range []int{1, 2} {
			c := versionedCodec(json, write)
			data, err := c.Encode(vNew{Celsius: 100})
			if err != nil {
				t.Fatal(err)
			}
			v, ok, err := ReadVersion(data, json)
			if err != nil || !ok || v != write {
				t.Fatalf("json=%v write=%d: ReadVersion(%q) = %d, %v, %v", json, write, data, v, ok, err)
			}
			again, _ := c.Encode(vNew{Celsius: 100})
			if !bytes.Equal(data, again) {
				t.Fatalf("not deterministic: %q, %q", data, again)
			}
			got, err := c.Decode(data)
			if err != nil || got.Celsius != 100 {
				t.Fatalf("json=%v write=%d: Decode(%q) = %v, %v", json, write, data, got, err)
			}
		}
	}
}

func TestVersionedUnstampedIsOldest(t *testing.T) {
	data, _ := MsgPack[vOld]{}.Encode(vOld{Fahrenheit: 212})
	got, err := versionedCodec(false, 2).Decode(data)
	if err != nil || got.Celsius != 100 {
		t.Fatalf("Decode = %v, %v", got, err)
	}
	got, err = versionedCodec(true, 2).Decode([]byte(`{"fahrenheit":212}`))
	if err != nil || got.Celsius != 100 {
		t.Fatalf("JSON Decode = %v, %v", got, err)
	}
}

func TestVersionedStampFirst(t *testing.T) {
	got, err := StampVersion([]byte(`{}`), true, 2)
	if err != nil || string(got) != `{"$v":2}` {
		t.Fatalf("StampVersion({}) = %q, %v", got, err)
	}
	got, _ = StampVersion([]byte(`{"a":1}`), true, 2)
	if string(got) != `{"$v":2,"a":1}` {
		t.Fatalf("StampVersion = %q", got)
	}
	got, _ = StampVersion([]byte{0x80}, false, 3)
	if !bytes.Equal(got, []byte{0x81, 0xa2, '$', 'v', 3}) {
		t.Fatalf("StampVersion msgpack = %x", got)
	}
}

func TestVersionedUnknownVersion(t *testing.T) {
	for _, tc := range []struct {
		json bool
		data []byte
	}{
		{true, []byte(`{"$v":3,"celsius":1}`)},
		// JSON spells a member name with escapes too: still the stamp (a
		// byte comparison read these as unstamped, the oldest version).
		{true, []byte(`{"\u0024v":3,"celsius":1}`)},
		{true, []byte(`{ "$\u0076" : 3,"celsius":1}`)},
		{false, []byte{0x81, 0xa2, '$', 'v', 3}},
	} {
		_, err := versionedCodec(tc.json, 2).Decode(tc.data)
		var ve *VersionError
		if !errors.Is(err, ErrVersion) || !errors.As(err, &ve) || ve.Version != 3 {
			t.Fatalf("Decode(%q) = %v, want a VersionError for 3", tc.data, err)
		}
	}
}

func TestReadVersionOfAnEscapedStamp(t *testing.T) {
	for _, data := range []string{`{"\u0024v":2}`, `{"$\u0076":2,"a":1}`, "{\n\"\\u0024\\u0076\" :2}"} {
		if v, ok, err := ReadVersion([]byte(data), true); err != nil || !ok || v != 2 {
			t.Errorf("ReadVersion(%s) = %d, %v, %v; want 2", data, v, ok, err)
		}
	}
	for _, data := range []string{`{"\u0024V":2}`, `{"$v ":2}`, `{"x":1,"$v":2}`, `{"\u0024v`} {
		if v, ok, err := ReadVersion([]byte(data), true); err != nil || ok {
			t.Errorf("ReadVersion(%s) = %d, %v, %v; want no stamp", data, v, ok, err)
		}
	}
}

func TestReadVersionMalformed(t *testing.T) {
	for _, tc := range []struct {
		json bool
		data string
	}{
		{true, `{"$v":0}`},
		{true, `{"$v":-1}`},
		{true, `{"$v":1.5}`},
		{true, `{"$v":"2"}`},
		{true, `{"$v":99999999999}`},
		{true, `{"$v":02}`},
		{true, `{"$v"`},
		{false, "\x81\xa2$v\xff"},
		{false, "\x81\xa2$v\xd0\x80"},
		{false, "\x81\xa2$v\x00"},
		{false, "\x81\xa2$v\xcf\x00\x00\x00\x01\x00\x00\x00\x00"},
		{false, "\x81\xa2$v\xcd\x01"},
		{false, "\x81\xa2$v"},
	} {
		if v, ok, err := ReadVersion([]byte(tc.data), tc.json); err == nil {
			t.Errorf("ReadVersion(%q) = %d, %v, nil; want an error", tc.data, v, ok)
		}
	}
}

func FuzzReadVersion(f *testing.F) {
	for _, s := range []string{`{"$v":2,"celsius":1}`, `{"\u0024v":2}`, `{"$\u0076":9}`, `{"\"":1}`, `{"fahrenheit":3}`, `{"$v":0}`, `{}`, "\x81\xa2$v\x02", "\x80", "\x82\xa2$v\xcd\x01\x00\xa1a\x01", "\xde\x00\x01\xd9\x02$v\x01"} {
		f.Add([]byte(s), s[0] == '{')
	}
	f.Fuzz(func(t *testing.T, data []byte, json bool) {
		v, ok, err := ReadVersion(data, json)
		if err != nil {
			return
		}
		if ok && (v < 1 || v > MaxVersion) {
			t.Fatalf("ReadVersion(%q) = %d", data, v)
		}
		// A map stamped again reads the new stamp.
		if !ok {
			if out, err := StampVersion(data, json, 7); err == nil {
				if v2, ok2, err2 := ReadVersion(out, json); err2 != nil || !ok2 || v2 != 7 {
					t.Fatalf("stamped %q -> %q reads %d, %v, %v", data, out, v2, ok2, err2)
				}
			}
		}
		c := versionedCodec(json, 2)
		_, _ = c.Decode(data)
	})
}
