package resp3

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// Requests exactly as the official Go SDK sends them (docs/wire-protocol.md#requests) and
// as the public article prints them.
var requestCases = []struct {
	name    string
	payload string
	args    []string
}{
	{"SetNX", "*4\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n$2\r\nNX\r\n", []string{"SET", "k1", "v1", "NX"}},
	{"SetNEXPX", "*6\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n$3\r\nNEX\r\n$2\r\nPX\r\n$5\r\n10000\r\n", []string{"SET", "k1", "v1", "NEX", "PX", "10000"}},
	{"Get", "*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n", []string{"GET", "k1"}},
	{"VDel", "*3\r\n$4\r\nVDEL\r\n$2\r\nk1\r\n$2\r\nzz\r\n", []string{"VDEL", "k1", "zz"}},
	{"KeyNotifyStop", "*3\r\n$9\r\nKEYNOTIFY\r\n$7\r\nSOMEKEY\r\n$4\r\nSTOP\r\n", []string{"KEYNOTIFY", "SOMEKEY", "STOP"}},
	{"KeyNotify", "*2\r\n$9\r\nKEYNOTIFY\r\n$7\r\nSOMEKEY\r\n", []string{"KEYNOTIFY", "SOMEKEY"}},
	{"ArticleSet", "*3\r\n$3\r\nset\r\n$7\r\nSETKEY2\r\n$6\r\nVALUE5\r\n", []string{"set", "SETKEY2", "VALUE5"}},
	{"ArticleGet", "*2\r\n$3\r\nget\r\n$7\r\nSETKEY2\r\n", []string{"get", "SETKEY2"}},
	{"ArticleDel", "*2\r\n$3\r\ndel\r\n$7\r\nSETKEY2\r\n", []string{"del", "SETKEY2"}},
	{"ArticleVDel", "*3\r\n$4\r\nvdel\r\n$7\r\nSETKEY2\r\n$3\r\nABC\r\n", []string{"vdel", "SETKEY2", "ABC"}},
	{"EmptyValue", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", []string{"SET", "k", ""}},
	{"BinaryValue", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\n\r\n\x00\xff\r\n", []string{"SET", "k", "\r\n\x00\xff"}},
	{"EmptyArray", "*0\r\n", []string{}},
}

func TestEncodeRequestMatchesSDKBytes(t *testing.T) {
	for _, tc := range requestCases {
		t.Run(tc.name, func(t *testing.T) {
			args := make([][]byte, len(tc.args))
			for i, a := range tc.args {
				args[i] = []byte(a)
			}
			if got := string(AppendCommand(nil, args...)); got != tc.payload {
				t.Fatalf("AppendCommand = %q, want %q", got, tc.payload)
			}
			// The piecewise form the hot path uses writes the same bytes.
			b := AppendArray(nil, len(tc.args))
			for _, a := range tc.args {
				b = AppendBulkString(b, a)
			}
			if string(b) != tc.payload {
				t.Fatalf("AppendBulkString form = %q, want %q", b, tc.payload)
			}
		})
	}
}

func TestParseRequestDecodesSDKBytes(t *testing.T) {
	for _, tc := range requestCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRequest([]byte(tc.payload), nil)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			strs := make([]string, len(got))
			for i, g := range got {
				strs[i] = string(g)
			}
			if !reflect.DeepEqual(strs, tc.args) {
				t.Fatalf("ParseRequest = %q, want %q", strs, tc.args)
			}
		})
	}
}

func TestParseRequestArgsAliasPayload(t *testing.T) {
	payload := []byte("*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n")
	args, err := ParseRequest(payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload[len(payload)-4] = 'K'
	if string(args[1]) != "K1" {
		t.Fatalf("args[1] = %q: decoded arguments should alias the payload", args[1])
	}
	// An append to one argument must not overwrite the bytes after it.
	_ = append(args[0], 'X')
	if payload[11] != '\r' {
		t.Fatal("appending to an argument overwrote the payload")
	}
}

func TestParseRequestRejectsMalformed(t *testing.T) {
	cases := []struct {
		name, payload string
	}{
		{"Empty", ""},
		{"NotArray", "$3\r\nGET\r\n"},
		{"SimpleStringRequest", "+GET\r\n"},
		{"NegativeCount", "*-2\r\n"},
		{"NullArray", "*-1\r\n"},
		{"NonDecimalCount", "*x\r\n"},
		{"SignedCount", "*+1\r\n$1\r\na\r\n"},
		{"LeadingZeroCount", "*01\r\n$1\r\na\r\n"},
		{"LeadingZeroBulkLength", "*1\r\n$01\r\na\r\n"},
		{"ZeroZeroBulkLength", "*1\r\n$00\r\n\r\n"},
		{"OverflowingCount", "*99999999999999999999\r\n"},
		{"CountBeyondPayload", "*1000000\r\n$1\r\na\r\n"},
		{"MissingElements", "*3\r\n$3\r\nGET\r\n"},
		{"NegativeBulkLength", "*1\r\n$-2\r\nab\r\n"},
		{"NullBulk", "*1\r\n$-1\r\n"},
		{"OverflowingBulkLength", "*1\r\n$4294967296\r\nab\r\n"},
		{"BulkBeyondPayload", "*1\r\n$100\r\nab\r\n"},
		{"BulkTooShort", "*1\r\n$3\r\nab\r\n"},
		{"BulkTooLong", "*1\r\n$1\r\nab\r\n"},
		{"MissingCRLFAfterCount", "*1"},
		{"LFOnly", "*1\n$1\na\n"},
		{"CROnly", "*1\r$1\ra\r"},
		{"MissingFinalCRLF", "*1\r\n$1\r\na"},
		{"TrailingBytes", "*1\r\n$1\r\na\r\nX"},
		{"TwoRequests", "*1\r\n$1\r\na\r\n*1\r\n$1\r\na\r\n"},
		{"NestedArray", "*1\r\n*1\r\n$1\r\na\r\n"},
		{"IntegerElement", "*1\r\n:1\r\n"},
		{"EmptyLength", "*\r\n"},
		{"SpaceInLength", "*1\r\n$ 1\r\na\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args, err := ParseRequest([]byte(tc.payload), nil)
			if err == nil {
				t.Fatalf("ParseRequest(%q) = %q, want an error", tc.payload, args)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not match ErrSyntax", err)
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(tc.payload) {
				t.Fatalf("error %v: want a *SyntaxError with an offset inside the payload", err)
			}
		})
	}
}

func ExampleAppendCommand() {
	buf := make([]byte, 0, 64)
	buf = AppendCommand(buf, []byte("GET"), []byte("k1"))
	fmt.Printf("%q\n", buf)
	// Output: "*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"
}

func ExampleParseRequest() {
	args, err := ParseRequest([]byte("*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n"), nil)
	fmt.Printf("%q %v\n", args, err)
	_, err = ParseRequest([]byte("*1\r\n$5\r\nSET\r\n"), nil)
	fmt.Println(errors.Is(err, ErrSyntax))
	// Output:
	// ["SET" "k1" "v1"] <nil>
	// true
}
