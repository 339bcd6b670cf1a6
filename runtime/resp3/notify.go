package resp3

import "github.com/ssgen/ssgen/internal/protocol"

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
		return protocol.NotifySet
	case OpDelete:
		return protocol.NotifyDelete
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
	dst = AppendArray(dst, 4)
	dst = AppendBulkString(dst, protocol.NotifyWord)
	dst = AppendBulkString(dst, protocol.NotifySet)
	dst = AppendBulkString(dst, protocol.NotifyValue)
	return AppendBulk(dst, value)
}

// AppendNotifyDelete appends "NOTIFY DELETE".
func AppendNotifyDelete(dst []byte) []byte {
	dst = AppendArray(dst, 2)
	dst = AppendBulkString(dst, protocol.NotifyWord)
	return AppendBulkString(dst, protocol.NotifyDelete)
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
	if len(args) >= 2 && string(args[0]) == protocol.NotifyWord {
		switch {
		case len(args) == 4 && string(args[1]) == protocol.NotifySet && string(args[2]) == protocol.NotifyValue:
			return Notification{Op: OpSet, Value: args[3]}, nil
		case len(args) == 2 && (string(args[1]) == protocol.NotifyDelete || string(args[1]) == protocol.NotifyDeleteShort):
			return Notification{Op: OpDelete}, nil
		}
	}
	return Notification{}, &SyntaxError{Offset: 0, Reason: "not a NOTIFY SET VALUE v or NOTIFY DELETE notification"}
}
