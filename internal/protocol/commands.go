package protocol

// Verbs, the first bulk string of a request payload. They are
// case-sensitive: the service knows them in upper case only.
const (
	VerbSet       = "SET"
	VerbGet       = "GET"
	VerbDel       = "DEL"
	VerbVDel      = "VDEL"
	VerbKeyNotify = "KEYNOTIFY"
	VerbScan      = "SCAN"
)

// Verbs lists the verbs the service knows.
var Verbs = [...]string{VerbSet, VerbGet, VerbDel, VerbVDel, VerbKeyNotify, VerbScan}

// Options of SET (OptNX, OptNEX, OptPX followed by milliseconds) and of
// KEYNOTIFY (OptStop).
const (
	OptNX   = "NX"
	OptNEX  = "NEX"
	OptPX   = "PX"
	OptStop = "STOP"
)

// Words of a notification payload: NotifyWord NotifySet NotifyValue
// <value> for a SET, NotifyWord NotifyDelete for a deletion.
// NotifyDeleteShort is the older spelling of NotifyDelete, accepted on
// reading.
const (
	NotifyWord        = "NOTIFY"
	NotifySet         = "SET"
	NotifyValue       = "VALUE"
	NotifyDelete      = "DELETE"
	NotifyDeleteShort = "DEL"
)

// ReplyOK is the simple string that answers a SET that stored its value
// and a KEYNOTIFY that registered or stopped.
const ReplyOK = "OK"
