package resp3

import "bytes"

// Op is what happened to a watched key.
type Op uint8

// Notification operations.
const (
	OpSet    Op = iota + 1 // the key was set; Notification.Value holds the new value
	OpDelete               // the key was deleted (DEL, VDEL, or expiry)
)

func (o Op) String() string {
	switch o {
	case OpSet:
		return "SET"
	case OpDelete:
		return "DELETE"
	}
	return "invalid"
}

// Notification is a decoded KEYNOTIFY notification payload.
type Notification struct {
	Op    Op
	Value []byte // the new value for OpSet; aliases the payload
}

// AppendNotifySet appends "NOTIFY SET VALUE value".
func AppendNotifySet(dst, value []byte) []byte {
	dst = append(dst, "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n"...)
	return AppendBulk(dst, value)
}

// AppendNotifyDelete appends "NOTIFY DELETE".
func AppendNotifyDelete(dst []byte) []byte {
	return append(dst, "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"...)
}

// ParseNotification decodes a notification payload. It accepts what the
// service sends (NOTIFY SET VALUE v, NOTIFY DELETE) and, for tolerance, the
// public article's NOTIFY DEL. Errors match ErrSyntax.
func ParseNotification(payload []byte) (Notification, error) {
	var buf [4][]byte
	args, err := ParseRequest(payload, buf[:0])
	if err != nil {
		return Notification{}, err
	}
	if len(args) >= 2 && bytes.Equal(args[0], []byte("NOTIFY")) {
		switch {
		case len(args) == 4 && bytes.Equal(args[1], []byte("SET")) && bytes.Equal(args[2], []byte("VALUE")):
			return Notification{Op: OpSet, Value: args[3]}, nil
		case len(args) == 2 && (bytes.Equal(args[1], []byte("DELETE")) || bytes.Equal(args[1], []byte("DEL"))):
			return Notification{Op: OpDelete}, nil
		}
	}
	return Notification{}, &SyntaxError{Offset: 0, Reason: "not a NOTIFY SET VALUE v or NOTIFY DELETE notification"}
}
