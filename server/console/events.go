package console

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
)

// Live streams: each open stream is one goroutine that wakes every
// streamTick, looks at what the rings gained since its last read (at most
// streamScan records of each), and writes one batch of the newest
// traceBatch requests that pass its caller's filter and of up to
// changeBatch distinct changed keys; what it leaves out it counts as
// lost. A person reads a few rows a second: a stream's cost is bounded by
// what it shows, not by the request rate. The request path never sees a
// stream: a slow or stalled browser only falls behind in the rings (and
// is told how many records it lost), and a write that cannot finish
// within streamWriteTimeout ends the stream.
const (
	streamTick  = 500 * time.Millisecond
	traceBatch  = 25
	changeBatch = 100
	// streamScan is the most records a stream looks at per tick: a
	// stream further behind skips to the newest ones (and says how many
	// it skipped), since a live view wants the present.
	streamScan         = 1024
	streamHeartbeat    = 15 * time.Second
	streamWriteTimeout = 10 * time.Second
	maxTraceLimit      = 1000
)

type traceEvent struct {
	Seq       uint64 `json:"seq"`
	Time      string `json:"time"`
	Client    string `json:"client"`
	Verb      string `json:"verb,omitempty"`
	Key       string `json:"key,omitempty"`
	Ref       string `json:"ref,omitempty"`
	KeyCut    bool   `json:"key_cut,omitempty"`
	Result    string `json:"result"`
	Failed    bool   `json:"failed"`
	Reason    string `json:"reason,omitempty"`
	LatencyUs int64  `json:"latency_us"`
	Version   string `json:"version,omitempty"`
	Console   bool   `json:"console,omitempty"` // made from the console
}

// traceFilter is what the caller asked to see of the trace, on top of
// what it may see (readable).
type traceFilter struct {
	client, key *glob.Pattern
	result      string // "", "ok" or "failed"
	readable    func([]byte) bool
}

func (c *Console) filterOf(r *http.Request) traceFilter {
	q := r.URL.Query()
	f := traceFilter{result: q.Get("result"), readable: c.readable(r)}
	if s := q.Get("client"); s != "" && len(s) <= 256 {
		f.client = glob.Compile(s)
	}
	if s := q.Get("key"); s != "" && len(s) <= 1024 {
		f.key = glob.Compile(s)
	}
	return f
}

// shows reports whether the record passes the filter. A request that
// names a key the caller may not read is never shown (SCAN's pattern is
// judged as a key), nor one whose key was cut to maxTraceKey, since the
// rule cannot be checked on part of a key.
func (f *traceFilter) shows(t *traceRecord) bool {
	if t.hasKey && f.readable != nil && (t.keyCut || !f.readable(t.key)) {
		return false
	}
	if f.client != nil && !f.client.Match(string(t.client)) {
		return false
	}
	if f.key != nil && (!t.hasKey || !f.key.Match(string(t.key))) {
		return false
	}
	switch f.result {
	case "ok":
		return !t.failed()
	case "failed":
		return t.failed()
	}
	return true
}

func (t *traceRecord) event(seq uint64) traceEvent {
	e := traceEvent{
		Seq: seq, Time: time.Unix(0, t.start).UTC().Format(time.RFC3339Nano),
		Client: string(t.client), Verb: t.verb, Result: t.resultText(), Failed: t.failed(),
		Reason: string(t.reason), LatencyUs: t.latency.Microseconds(), Version: string(t.version), Console: t.internal,
	}
	if t.hasKey {
		e.Key, e.Ref, e.KeyCut = display(t.key), ref(t.key), t.keyCut
	}
	return e
}

// apiTrace answers the last ?limit= (100) requests of the ring that pass
// the filter (?client=, ?key= globs; ?result=ok|failed), oldest first.
func (c *Console) apiTrace(w http.ResponseWriter, r *http.Request) {
	f := c.filterOf(r)
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxTraceLimit)
	out := make([]traceEvent, 0, limit)
	next, _ := c.trace.read(0, func(seq uint64, t *traceRecord) bool {
		if f.shows(t) {
			if len(out) == limit {
				copy(out, out[1:])
				out = out[:limit-1]
			}
			out = append(out, t.event(seq))
		}
		return true
	})
	writeJSON(w, http.StatusOK, struct {
		Events []traceEvent `json:"events"`
		Next   uint64       `json:"next"`
	}{out, next})
}

type changeEvent struct {
	Key     string `json:"key"`
	Ref     string `json:"ref"`
	Deleted bool   `json:"deleted,omitempty"`
}

// events streams the trace (event "trace") and the changes of the key
// space (event "keys") as Server-Sent Events, from ?since= (a trace
// sequence number; the current end by default), filtered as apiTrace.
// Records lost to a slow reader are announced (event "lost").
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	if int(c.streams.Add(1)) > c.opts.MaxStreams {
		c.streams.Add(-1)
		httpError(w, http.StatusServiceUnavailable, "too many live streams open")
		return
	}
	defer c.streams.Add(-1)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// The stream starts where the rings are before its headers go out: a
	// client that acts once it has them sees what it did.
	f := c.filterOf(r)
	readable := f.readable
	traceAt := c.trace.next()
	if s, err := strconv.ParseUint(r.URL.Query().Get("since"), 10, 64); err == nil && s < traceAt {
		traceAt = s
	}
	changeAt := c.changes.next()
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	tick := time.NewTicker(streamTick)
	defer tick.Stop()
	lastWrite := time.Now()
	var (
		trace   []traceEvent
		changes []changeEvent
		buf     []byte
		seqs    []uint64
		seen    = map[string]int{}
	)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case <-tick.C:
		}
		trace, changes = trace[:0], changes[:0]
		var lostTrace, lostChanges uint64
		traceAt, lostTrace = skipAhead(traceAt, c.trace.next())
		changeAt, lostChanges = skipAhead(changeAt, c.changes.next())
		var skipped uint64
		trace, traceAt, skipped = c.newestTrace(&f, traceAt, seqs[:0], trace)
		lostTrace += skipped
		changes, changeAt, skipped = c.newestChanges(readable, changeAt, seen, changes)
		lostChanges += skipped
		buf = buf[:0]
		if lostTrace+lostChanges > 0 {
			buf = appendEvent(buf, "lost", map[string]uint64{"trace": lostTrace, "keys": lostChanges})
		}
		if len(trace) > 0 {
			buf = appendEvent(buf, "trace", trace)
		}
		if len(changes) > 0 {
			buf = appendEvent(buf, "keys", changes)
		}
		if len(buf) == 0 {
			if time.Since(lastWrite) < streamHeartbeat {
				continue
			}
			buf = append(buf, ": keep-alive\n\n"...)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(buf); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		lastWrite = time.Now()
	}
}

func appendEvent(buf []byte, name string, v any) []byte {
	b, _ := json.Marshal(v)
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, b...)
	return append(buf, "\n\n"...)
}

// skipAhead moves a stream's position to at most streamScan records
// behind head, returning it and how many records were skipped.
func skipAhead(at, head uint64) (uint64, uint64) {
	if head > at+streamScan {
		return head - streamScan, head - streamScan - at
	}
	return at, 0
}

// newestTrace appends to out the events of the newest traceBatch
// records from at on that f shows, and returns them with where to read
// next and how many records that f shows it left out (older ones, or ones
// overwritten while it read). It reads the ring twice: first only to
// choose (a filter check per record), then to build the chosen events.
func (c *Console) newestTrace(f *traceFilter, at uint64, seqs []uint64, out []traceEvent) ([]traceEvent, uint64, uint64) {
	end, lost := c.trace.read(at, func(seq uint64, t *traceRecord) bool {
		if f.shows(t) {
			seqs = append(seqs, seq)
		}
		return true
	})
	if len(seqs) > traceBatch {
		lost += uint64(len(seqs) - traceBatch)
		seqs = seqs[len(seqs)-traceBatch:]
	}
	if len(seqs) == 0 {
		return out, end, lost
	}
	i := 0
	c.trace.read(seqs[0], func(seq uint64, t *traceRecord) bool {
		for i < len(seqs) && seqs[i] < seq {
			i++
		}
		if i < len(seqs) && seqs[i] == seq {
			out = append(out, t.event(seq))
			i++
		}
		return i < len(seqs) && seq+1 < end
	})
	lost += uint64(len(seqs) - len(out))
	return out, end, lost
}

// newestChanges appends to out up to changeBatch distinct keys changed
// from at on that readable allows (the latest change of each), and
// returns them with where to read next and how many changes it left out.
func (c *Console) newestChanges(readable func([]byte) bool, at uint64, seen map[string]int, out []changeEvent) ([]changeEvent, uint64, uint64) {
	clear(seen)
	var left uint64
	next, lost := c.changes.read(at, func(_ uint64, ch *changeRecord) bool {
		if ch.cut || readable != nil && !readable(ch.key) {
			return true
		}
		if i, ok := seen[string(ch.key)]; ok {
			out[i].Deleted = ch.deleted
			return true
		}
		if len(out) == changeBatch {
			left++
			return true
		}
		seen[string(ch.key)] = len(out)
		out = append(out, changeEvent{Key: display(ch.key), Ref: ref(ch.key), Deleted: ch.deleted})
		return true
	})
	return out, next, lost + left
}
