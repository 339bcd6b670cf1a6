package console

import (
	"strconv"
	"time"

	"github.com/ssgen/ssgen/server"
)

// maxTraceKey bounds the key bytes a trace record keeps; a longer key is
// cut (and marked so).
const maxTraceKey = 512

// traceRecord is one request in the trace ring. Its key buffer is reused
// when the slot is written again; strings are shared with the request
// (immutable), so recording allocates nothing.
type traceRecord struct {
	start    int64 // Unix nanoseconds
	latency  time.Duration
	client   string
	verb     string
	key      []byte
	hasKey   bool
	keyCut   bool
	status   int
	answer   answer
	size     int // answerValue: value bytes; answerList: keys listed
	version  string
	errText  string
	reason   string
	dropped  bool
	kicked   bool
	internal bool // made by the console itself (Server.Exec)
}

// answer is the shape of a response payload, enough to summarise it.
type answer uint8

const (
	answerNone answer = iota
	answerOK
	answerInt
	answerNil
	answerValue
	answerList
	answerError
)

// record copies ev into the slot's record.
func (t *traceRecord) record(ev *server.RequestEvent) {
	t.start = ev.Start.UnixNano()
	t.latency = ev.Latency
	t.client, t.verb = ev.Client, ev.Verb
	k := ev.Key
	t.keyCut = len(k) > maxTraceKey
	if t.keyCut {
		k = k[:maxTraceKey]
	}
	t.key = append(t.key[:0], k...)
	t.hasKey = ev.Key != nil
	t.status, t.version, t.errText, t.reason = ev.Status, ev.Version, ev.Error, ev.Reason
	t.dropped, t.kicked = ev.Dropped, ev.Disconnected
	t.answer, t.size = summarize(ev.Payload)
}

// summarize reads the first line of a RESP3 response.
func summarize(p []byte) (answer, int) {
	if len(p) == 0 {
		return answerNone, 0
	}
	switch p[0] {
	case '+':
		return answerOK, 0
	case '-':
		return answerError, 0
	case ':':
		n, _ := leadingInt(p[1:])
		return answerInt, n
	case '$':
		n, ok := leadingInt(p[1:])
		if !ok || n < 0 {
			return answerNil, 0
		}
		return answerValue, n
	case '_':
		return answerNil, 0
	case '*':
		// SCAN: *1 or *2, then *N, the keys listed.
		for i := 1; i+1 < len(p); i++ {
			if p[i] == '\n' && p[i+1] == '*' {
				n, _ := leadingInt(p[i+2:])
				return answerList, n
			}
		}
		return answerList, 0
	}
	return answerNone, 0
}

// leadingInt parses the decimal integer at the start of b (up to CR).
func leadingInt(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	n, digits := 0, 0
	for _, c := range b {
		if c < '0' || c > '9' || digits > 12 {
			break
		}
		n = n*10 + int(c-'0')
		digits++
	}
	if neg {
		n = -n
	}
	return n, digits > 0
}

// failed reports whether the request was not served: dropped, refused by
// an envelope rule (400, 505) or answered -ERR.
func (t *traceRecord) failed() bool {
	return t.dropped || t.status != 200 || t.answer == answerError
}

// resultText is how the trace shows the answer.
func (t *traceRecord) resultText() string {
	switch {
	case t.kicked:
		return "dropped, client disconnected"
	case t.dropped:
		return "dropped"
	case t.status != 200:
		return strconv.Itoa(t.status) + " " + t.errText
	}
	switch t.answer {
	case answerOK:
		return "OK"
	case answerInt:
		return strconv.Itoa(t.size)
	case answerNil:
		return "nil"
	case answerValue:
		return strconv.Itoa(t.size) + " B"
	case answerList:
		return strconv.Itoa(t.size) + " keys"
	case answerError:
		return "-ERR " + t.errText
	}
	return ""
}

// changeRecord is one change of the key space in the change ring.
type changeRecord struct {
	key     []byte
	cut     bool
	deleted bool
}
