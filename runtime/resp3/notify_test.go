package resp3

import (
	"errors"
	"fmt"
	"testing"
)

func TestNotificationsMatchContractBytes(t *testing.T) {
	cases := []struct {
		name    string
		payload string
		n       Notification
		write   func([]byte) []byte
	}{
		{"Set", "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$3\r\nabc\r\n", Notification{Op: OpSet, Value: []byte("abc")},
			func(b []byte) []byte { return AppendNotifySet(b, []byte("abc")) }},
		{"SetEmptyValue", "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$0\r\n\r\n", Notification{Op: OpSet, Value: []byte{}},
			func(b []byte) []byte { return AppendNotifySet(b, nil) }},
		{"Delete", "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n", Notification{Op: OpDelete}, AppendNotifyDelete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.write(nil)); got != tc.payload {
				t.Fatalf("writer = %q, want %q", got, tc.payload)
			}
			n, err := ParseNotification([]byte(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if n.Op != tc.n.Op || string(n.Value) != string(tc.n.Value) {
				t.Fatalf("ParseNotification = %+v, want %+v", n, tc.n)
			}
		})
	}
}

// The public article names the delete operation DEL; the service sends
// DELETE. A tolerant client reads both.
func TestParseNotificationAcceptsArticleDel(t *testing.T) {
	n, err := ParseNotification([]byte("*2\r\n$6\r\nNOTIFY\r\n$3\r\nDEL\r\n"))
	if err != nil || n.Op != OpDelete {
		t.Fatalf("got %+v, %v", n, err)
	}
}

func TestParseNotificationRejectsOthers(t *testing.T) {
	cases := []string{
		"",
		"+OK\r\n",
		"*1\r\n$6\r\nNOTIFY\r\n",
		"*2\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n", // SET without VALUE
		"*3\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n",            // VALUE without value
		"*4\r\n$6\r\nNOTICE\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$1\r\nv\r\n", // wrong word
		"*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUX\r\n$1\r\nv\r\n",
		"*3\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n$1\r\nv\r\n",
		"*2\r\n$6\r\nnotify\r\n$6\r\nDELETE\r\n",
	}
	for _, p := range cases {
		if n, err := ParseNotification([]byte(p)); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseNotification(%q) = %+v, %v; want ErrSyntax", p, n, err)
		}
	}
}

func TestOpString(t *testing.T) {
	if OpSet.String() != "SET" || OpDelete.String() != "DELETE" || Op(0).String() != "invalid" {
		t.Fatal("Op.String")
	}
}

func ExampleParseNotification() {
	n, err := ParseNotification(AppendNotifySet(nil, []byte("21.5")))
	fmt.Println(n.Op, string(n.Value), err)
	n, err = ParseNotification(AppendNotifyDelete(nil))
	fmt.Println(n.Op, err)
	// Output:
	// SET 21.5 <nil>
	// DELETE <nil>
}
