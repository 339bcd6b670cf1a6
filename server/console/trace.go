package console

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/server"
)

// Bounds of the strings a trace record keeps. Every string a record holds
// is copied into its slot's own buffer and cut to these, so the ring's
// memory is fixed whatever clients send (a client id, a __ts or a
// __protVer of 64 KiB): see traceRecordBytes.
const (
	// maxTraceKey bounds the key bytes a trace record keeps; a longer key
	// is cut (and marked so).
	maxTraceKey = 512
	// maxTraceClient bounds the client id (an MQTT client id, or an
	// external-mode __srcId, may be 64 KiB).
	maxTraceClient = 256
	// maxTraceVersion bounds the __ts answered.
	maxTraceVersion = 64
	// maxTraceError bounds the -ERR text or the 400/505 message.
	maxTraceError = 256
	// maxTraceReason bounds why a request was refused (it may quote a
	// client's __ts, __ft, __protVer or client id).
	maxTraceReason = 1024
	// clipMark ends a string that was cut.
	clipMark = "…"
)

// traceRecordBytes is the most memory one trace record holds beyond its
// fixed fields: each buffer's capacity is its bound plus clipMark,
// rounded up by the allocator by at most 1/8.
const traceRecordBytes = (maxTraceKey + maxTraceClient + maxTraceVersion + maxTraceError + maxTraceReason + 4*len(clipMark)) * 9 / 8

// traceRecord is one request in the trace ring. Its buffers are reused
// when the slot is written again and never grow beyond their bounds, so
// recording allocates nothing once the ring has gone round, and keeps
// nothing of the request alive.
type traceRecord struct {
	start    int64 // Unix nanoseconds
	latency  time.Duration
	client   []byte
	verb     string // a constant, or at most 32 bytes (server.RequestEvent)
	key      []byte
	hasKey   bool
	keyCut   bool
	status   int
	answer   answer
	size     int // answerValue: value bytes; answerList: keys listed
	version  []byte
	errText  []byte
	reason   []byte
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
	t.client = keep(t.client, ev.Client, maxTraceClient)
	t.verb = ev.Verb
	if len(t.verb) > 32 { // server.RequestEvent promises it; the ring does not rely on it
		t.verb = strings.Clone(t.verb[:32])
	}
	k := ev.Key
	t.keyCut = len(k) > maxTraceKey
	if t.keyCut {
		k = k[:maxTraceKey]
	}
	t.key = append(t.key[:0], k...)
	t.hasKey = ev.Key != nil
	t.status = ev.Status
	t.version = keep(t.version, ev.Version, maxTraceVersion)
	t.errText = keep(t.errText, ev.Error, maxTraceError)
	t.reason = keep(t.reason, ev.Reason, maxTraceReason)
	t.dropped, t.kicked = ev.Dropped, ev.Disconnected
	t.answer, t.size = summarize(ev.Payload)
}

// keep copies s into buf (reusing it), cut to max bytes at a character
// boundary and marked with clipMark when longer.
func keep(buf []byte, s string, max int) []byte {
	buf = buf[:0]
	if len(s) <= max {
		return append(buf, s...)
	}
	cut := max
	for i := 0; i < utf8.UTFMax && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	if cap(buf) < max+len(clipMark) {
		buf = make([]byte, 0, max+len(clipMark))
	}
	buf = append(buf, s[:cut]...)
	return append(buf, clipMark...)
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
		return strconv.Itoa(t.status) + " " + string(t.errText)
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
		return "-ERR " + string(t.errText)
	}
	return ""
}

// changeRecord is one change of the key space in the change ring.
type changeRecord struct {
	key     []byte
	cut     bool
	deleted bool
}
