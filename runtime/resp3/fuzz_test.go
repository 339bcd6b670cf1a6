package resp3

import (
	"bytes"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, tc := range requestCases {
		f.Add([]byte(tc.payload))
	}
	for _, tc := range responseCases {
		f.Add([]byte(tc.payload))
	}
	for _, text := range errorTexts {
		f.Add(AppendError(nil, text))
	}
	f.Add(AppendNotifySet(nil, []byte("v")))
	f.Add(AppendNotifyDelete(nil))
	f.Add([]byte("*2147483647\r\n"))
	f.Add([]byte("$2147483647\r\n"))
}

// FuzzParseRequest: decoding never panics, never returns more arguments than
// the payload can hold, and what it accepts re-encodes to the same bytes (a
// request has one spelling: lengths without signs or leading zeros).
func FuzzParseRequest(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("*01\r\n$1\r\na\r\n"))
	f.Add([]byte("*1\r\n$00\r\n\r\n"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		args, err := ParseRequest(payload, nil)
		if err != nil {
			return
		}
		if len(args) > len(payload)/minElemLen {
			t.Fatalf("%d args from %d bytes", len(args), len(payload))
		}
		if again := AppendCommand(nil, args...); !bytes.Equal(again, payload) {
			t.Fatalf("%q parsed as %q, which re-encodes as %q", payload, args, again)
		}
	})
}

// FuzzParseResponse: decoding never panics, and what it accepts re-encodes
// to a payload that decodes to the same value.
func FuzzParseResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		v, err := ParseResponse(payload)
		if err != nil {
			return
		}
		if n := countValues(v); n > len(payload)/minElemLen {
			t.Fatalf("%d values from %d bytes", n, len(payload))
		}
		canonical := AppendValue(nil, v)
		again, err := ParseResponse(canonical)
		if err != nil || !bytes.Equal(AppendValue(nil, again), canonical) {
			t.Fatalf("re-encoding %q: %q, %v", payload, canonical, err)
		}
	})
}

// FuzzParseNotification: never panics; accepted notifications re-encode.
func FuzzParseNotification(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		n, err := ParseNotification(payload)
		if err != nil {
			return
		}
		var again []byte
		switch n.Op {
		case OpSet:
			again = AppendNotifySet(nil, n.Value)
		case OpDelete:
			again = AppendNotifyDelete(nil)
		default:
			t.Fatalf("accepted op %v", n.Op)
		}
		if back, err := ParseNotification(again); err != nil || back.Op != n.Op || !bytes.Equal(back.Value, n.Value) {
			t.Fatalf("re-encoding %q: %+v, %v", payload, back, err)
		}
	})
}

// FuzzEncodeRequest: any arguments encode to a payload that decodes back to
// them.
func FuzzEncodeRequest(f *testing.F) {
	f.Add([]byte("SET"), []byte("k1"), []byte("v1"))
	f.Add([]byte(""), []byte("\r\n"), []byte("$-1\r\n"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		payload := AppendCommand(nil, a, b, c)
		args, err := ParseRequest(payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(args) != 3 || !bytes.Equal(args[0], a) || !bytes.Equal(args[1], b) || !bytes.Equal(args[2], c) {
			t.Fatalf("round trip of %q %q %q gave %q", a, b, c, args)
		}
	})
}

func countValues(v Value) int {
	n := 1
	for _, e := range v.Elems {
		n += countValues(e)
	}
	return n
}
