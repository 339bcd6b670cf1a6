package resp3

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// Every response payload of docs/wire-protocol.md#responses and the article, as the
// service writes it and as a client reads it.
var responseCases = []struct {
	name    string
	payload string
	value   Value
	write   func([]byte) []byte
}{
	{"SetStored", "+OK\r\n", Value{Kind: KindSimple, Str: []byte("OK")}, AppendOK},
	{"ConditionFailed", ":-1\r\n", Value{Kind: KindInteger, Int: -1}, func(b []byte) []byte { return AppendInteger(b, -1) }},
	{"Deleted", ":1\r\n", Value{Kind: KindInteger, Int: 1}, func(b []byte) []byte { return AppendInteger(b, 1) }},
	{"Absent", ":0\r\n", Value{Kind: KindInteger, Int: 0}, func(b []byte) []byte { return AppendInteger(b, 0) }},
	{"GetHit", "$4\r\n1234\r\n", Value{Kind: KindBulk, Str: []byte("1234")}, func(b []byte) []byte { return AppendBulk(b, []byte("1234")) }},
	{"GetHitEmpty", "$0\r\n\r\n", Value{Kind: KindBulk, Str: []byte{}}, func(b []byte) []byte { return AppendBulk(b, nil) }},
	{"GetMiss", "$-1\r\n", Value{Kind: KindNull}, AppendNull},
	{"SimplePong", "+PONG\r\n", Value{Kind: KindSimple, Str: []byte("PONG")}, func(b []byte) []byte { return AppendSimple(b, "PONG") }},
	{"ScanLastPage", "*1\r\n*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n", Value{Kind: KindArray, Elems: []Value{
		{Kind: KindArray, Elems: []Value{{Kind: KindBulk, Str: []byte("k1")}, {Kind: KindBulk, Str: []byte("k2")}}},
	}}, nil},
	{"ScanMorePages", "*2\r\n*1\r\n$2\r\nk1\r\n$3\r\ntok\r\n", Value{Kind: KindArray, Elems: []Value{
		{Kind: KindArray, Elems: []Value{{Kind: KindBulk, Str: []byte("k1")}}},
		{Kind: KindBulk, Str: []byte("tok")},
	}}, nil},
}

// errorTexts are the exact -ERR messages (docs/wire-protocol.md#errors).
var errorTexts = []string{
	"the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized",
	"a fencing token is required for this request",
	"the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized",
	"the request fencing token is a lower version than the fencing token protecting the resource",
	"the quota has been exceeded",
	"syntax error",
	"not authorized",
	"unknown command",
	"wrong number of arguments",
	"missing timestamp",
	"malformed timestamp",
	"the key length is zero",
}

func TestResponsesRoundTrip(t *testing.T) {
	for _, tc := range responseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseResponse([]byte(tc.payload))
			if err != nil {
				t.Fatalf("ParseResponse(%q): %v", tc.payload, err)
			}
			if !reflect.DeepEqual(got, tc.value) {
				t.Fatalf("ParseResponse(%q) = %+v, want %+v", tc.payload, got, tc.value)
			}
			if tc.write != nil {
				if w := string(tc.write(nil)); w != tc.payload {
					t.Fatalf("writer = %q, want %q", w, tc.payload)
				}
			}
			if w := string(AppendValue(nil, tc.value)); w != tc.payload {
				t.Fatalf("AppendValue = %q, want %q", w, tc.payload)
			}
		})
	}
}

func TestErrorResponsesCarryExactText(t *testing.T) {
	for _, text := range errorTexts {
		payload := "-ERR " + text + "\r\n"
		if got := string(AppendError(nil, text)); got != payload {
			t.Fatalf("AppendError = %q, want %q", got, payload)
		}
		v, err := ParseResponse([]byte(payload))
		if err != nil || v.Kind != KindError {
			t.Fatalf("ParseResponse(%q) = %+v, %v", payload, v, err)
		}
		if v.ErrorText() != text {
			t.Fatalf("ErrorText = %q, want %q", v.ErrorText(), text)
		}
	}
}

func TestErrorTextToleratesOtherForms(t *testing.T) {
	cases := map[string]string{
		"-ERR: the key length is zero\r\n": "the key length is zero", // the article's form
		"-ERR something new\r\n":           "something new",
		"-WRONGTYPE bad\r\n":               "WRONGTYPE bad",
		"-ERR\r\n":                         "",
	}
	for payload, want := range cases {
		v, err := ParseResponse([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		if v.ErrorText() != want {
			t.Errorf("ErrorText(%q) = %q, want %q", payload, v.ErrorText(), want)
		}
	}
}

func TestParseResponseRejectsMalformed(t *testing.T) {
	cases := map[string]string{
		"Empty":              "",
		"ArticleMinusOne":    "-1\r\n:", // "-1\r\n" alone is an error value; with junk after it, trailing bytes
		"UnknownType":        "%1\r\n",
		"BadInteger":         ":x\r\n",
		"EmptyInteger":       ":\r\n",
		"PlusInteger":        ":+1\r\n",
		"OverflowInteger":    ":9223372036854775808\r\n",
		"MissingCRLF":        "+OK",
		"TrailingBytes":      "+OK\r\n+OK\r\n",
		"BulkBeyondPayload":  "$10\r\nabc\r\n",
		"NegativeBulk":       "$-5\r\n",
		"NullArray":          "*-1\r\n",
		"ArrayBeyondPayload": "*5\r\n:1\r\n",
		"DeepNesting":        "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n",
		"BareLF":             "+OK\n",
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := ParseResponse([]byte(payload))
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseResponse(%q) = %+v, %v; want ErrSyntax", payload, v, err)
			}
		})
	}
}

// The article documents a bare "-1\r\n" for failed conditions; every SDK
// rejects it as a result, and it reads as an error value with text "1".
func TestArticleMinusOneIsAnErrorValue(t *testing.T) {
	v, err := ParseResponse([]byte("-1\r\n"))
	if err != nil || v.Kind != KindError || v.ErrorText() != "1" {
		t.Fatalf("ParseResponse(-1) = %+v, %v", v, err)
	}
}

func TestKindString(t *testing.T) {
	if KindNull.String() != "null" || Kind(99).String() != "Kind(99)" {
		t.Fatal(KindNull.String(), Kind(99).String())
	}
}

func ExampleParseResponse() {
	for _, p := range []string{"+OK\r\n", ":-1\r\n", "$2\r\nv1\r\n", "$-1\r\n", "-ERR syntax error\r\n"} {
		v, _ := ParseResponse([]byte(p))
		switch v.Kind {
		case KindError:
			fmt.Println(v.Kind, v.ErrorText())
		case KindInteger:
			fmt.Println(v.Kind, v.Int)
		default:
			fmt.Printf("%v %q\n", v.Kind, v.Str)
		}
	}
	// Output:
	// simple string "OK"
	// integer -1
	// bulk string "v1"
	// null ""
	// error syntax error
}

// A header that announces more than the payload holds is refused before
// anything is allocated for it.
func TestHugeHeadersAllocateNothing(t *testing.T) {
	payloads := []string{
		"*2147483647\r\n:1\r\n",
		"*1\r\n*2147483647\r\n",
		"$2147483647\r\nabc\r\n",
		"*1\r\n$2147483647\r\nabc\r\n",
	}
	for _, p := range payloads {
		b := []byte(p)
		// TotalAlloc counts every goroutine's allocations (the race
		// detector's and the runtime's too), so take the least of a few
		// runs: a decoder that allocates for the header does so every time.
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, errResp := ParseResponse(b)
			_, errReq := ParseRequest(b, nil)
			runtime.ReadMemStats(&after)
			if errResp == nil || errReq == nil {
				t.Fatalf("%q accepted", p)
			}
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		if least > 4096 {
			t.Fatalf("%q: decoding allocated %d bytes", p, least)
		}
	}
}

// Simple strings and errors are one line: text with CR or LF (as from a
// request's property) must not break the framing.
func TestLineValuesNeverContainCRLF(t *testing.T) {
	for _, payload := range [][]byte{
		AppendError(nil, "unsupported protocol version 2\r\n+OK"),
		AppendSimple(nil, "a\nb\rc"),
	} {
		v, err := ParseResponse(payload)
		if err != nil {
			t.Fatalf("%q: %v", payload, err)
		}
		if bytes.ContainsAny(v.Str, "\r\n") {
			t.Fatalf("%q: line value %q holds CR or LF", payload, v.Str)
		}
	}
	if got := string(AppendError(nil, "x\r\ny")); got != "-ERR x  y\r\n" {
		t.Fatalf("AppendError = %q", got)
	}
}
