package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// logBuffer collects a server's JSON log lines; its goroutines write
// while the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the lines logged so far, decoded.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the records with msg whose fields include want.
func (l *logBuffer) find(t *testing.T, msg string, want map[string]any) []map[string]any {
	t.Helper()
	var got []map[string]any
	for _, r := range l.records(t) {
		if r["msg"] != msg {
			continue
		}
		match := true
		for k, v := range want {
			if r[k] != v {
				match = false
			}
		}
		if match {
			got = append(got, r)
		}
	}
	return got
}

func withLog(l *logBuffer, level slog.Level) func(*server.Options) {
	return func(o *server.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level}))
	}
}

const loggingPolicy = `
rules:
  - principals: {clientIds: ["reader"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["pub/*"], method: Read}
  - principals: {clientIds: ["writer"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["*"], method: ReadWrite}
`

// TestRefusedRequestsAreLoggedAtDebug sends one request per kind of
// refusal and finds each logged once, at debug level, with client, verb,
// key, the -ERR text and the reason.
func TestRefusedRequestsAreLoggedAtDebug(t *testing.T) {
	pol, err := server.ParsePolicy([]byte(loggingPolicy))
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	e := newEnv(t, "", []func(*server.Options){withLog(&logs, slog.LevelDebug), func(o *server.Options) {
		o.MaxKeys = 2
		o.Security.Authorization = pol
	}})
	w, r := e.connect("writer"), e.connect("reader")
	old := e.stamp(-10 * time.Second)
	lockTok := e.stamp(0)
	checkResponse(t, w.roundTrip(request{payload: cmd("SET", "pub/lock", "held"), ft: lockTok}), "+OK\r\n", true)
	checkResponse(t, w.do("SET", "other", "x"), "+OK\r\n", true)

	type rec = map[string]any
	for _, tc := range []struct {
		c    *client
		req  request
		want rec
	}{
		{r, request{payload: cmd("SET", "pub/a", "1")}, rec{"verb": "SET", "key": "pub/a", "error": "not authorized", "reason": "authorization", "detail": `rule 1 names client "reader" but grants no Write on this key`}},
		{r, request{payload: cmd("GET", "secret")}, rec{"verb": "GET", "key": "secret", "reason": "authorization", "detail": `rule 1 names client "reader" but grants no Read on this key`}},
		{w, request{payload: cmd("SET", "pub/lock", "mine")}, rec{"verb": "SET", "key": "pub/lock", "error": string(engine.ErrFencingTokenRequired), "reason": "fencing"}},
		{w, request{payload: cmd("DEL", "pub/lock"), ft: old}, rec{"verb": "DEL", "reason": "fencing", "detail": "request __ft " + old + " is lower than the key's fencing token " + lockTok}},
		{w, request{payload: cmd("SET", "third", "x")}, rec{"verb": "SET", "key": "third", "error": string(engine.ErrQuotaExceeded), "reason": "quota"}},
		{w, request{payload: []byte("*1\r\n$3\r\nGE")}, rec{"error": "syntax error", "reason": "syntax"}},
		{w, request{payload: cmd("FLUSHALL")}, rec{"verb": "FLUSHALL", "error": "unknown command", "reason": "command"}},
		{w, request{payload: cmd("SET", "k")}, rec{"verb": "SET", "key": "k", "reason": "arguments"}},
		{w, request{payload: cmd("SET", "k", "v"), noTS: true}, rec{"verb": "SET", "reason": "timestamp", "error": "missing timestamp"}},
		{r, request{payload: cmd("GET", "bin\x00\xff")}, rec{"verb": "GET", "key": "base64:YmluAP8=", "reason": "authorization"}},
	} {
		tc.c.roundTrip(tc.req)
		tc.want["client"] = tc.c.id
		tc.want["level"] = "DEBUG"
		if got := logs.find(t, "request refused", tc.want); len(got) != 1 {
			t.Errorf("%q: %d records with %v in\n%v", tc.req.payload, len(got), tc.want, logs.records(t))
		}
	}
	// Answers that are no refusal are not logged as one.
	checkResponse(t, w.do("SET", "other", "y", "NX"), ":-1\r\n", true)
	if n := len(logs.find(t, "request refused", nil)); n != 10 {
		t.Errorf("%d refusals logged, want 10", n)
	}
	// A key too long for a log line is cut.
	r.do("GET", "bin\x00\xff"+strings.Repeat("k", 500))
	cut := logs.find(t, "request refused", map[string]any{"verb": "GET", "reason": "authorization"})
	if k := cut[len(cut)-1]["key"].(string); !strings.HasSuffix(k, "…(505 bytes)") || len(k) > 300 {
		t.Errorf("long key logged as %q", k)
	}
}

func TestRefusalsAreNotLoggedAtInfo(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, "", []func(*server.Options){withLog(&logs, slog.LevelInfo)})
	c := e.connect("c")
	c.do("FLUSHALL")
	c.roundTrip(request{payload: cmd("SET", "k", "v"), noTS: true})
	for _, r := range logs.records(t) {
		if r["msg"] == "request refused" || r["level"] == "DEBUG" {
			t.Errorf("logged at info: %v", r)
		}
	}
}

// TestBrokerLogLevels ends connections in the ways clients do and checks
// what the embedded broker's log says: never an empty message, never a
// warning for a client that just went away.
func TestBrokerLogLevels(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, "", []func(*server.Options){withLog(&logs, slog.LevelDebug)})
	connect := []byte{0x10, 0x0d, 0x00, 0x04, 'M', 'Q', 'T', 'T', 0x05, 0x02, 0x00, 0x3c, 0x00, 0x00, 0x00}
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", e.srv.Addr(), wait)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	readConnack := func(c net.Conn) {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		if _, err := c.Read(make([]byte, 64)); err != nil {
			t.Fatalf("no CONNACK: %v", err)
		}
	}
	ended := func(n int) {
		t.Helper()
		waitFor(t, "connection ended records", func() bool { return len(logs.find(t, "connection ended", nil)) >= n })
	}

	// An abrupt disconnect after CONNECT: debug.
	c := dial()
	_, _ = c.Write(connect)
	readConnack(c)
	c.Close()
	ended(1)
	// A connection that closes before CONNECT (a port probe): debug.
	dial().Close()
	ended(2)
	// A first packet that is not CONNECT: a broken client, info.
	c = dial()
	_, _ = c.Write([]byte{0x30, 0x01, 0x00})
	ended(3)
	c.Close()
	// A malformed packet after CONNECT: info.
	c = dial()
	_, _ = c.Write(connect)
	readConnack(c)
	_, _ = c.Write([]byte{0xf0, 0x00})
	ended(4)
	c.Close()

	// A clean DISCONNECT: the service's record at debug, without an
	// error; the abrupt ends above: at info, naming the error.
	c = dial()
	_, _ = c.Write(connect)
	readConnack(c)
	_, _ = c.Write([]byte{0xe0, 0x00})
	waitFor(t, "the service's record of a clean disconnect", func() bool {
		return len(logs.find(t, "client disconnected", map[string]any{"level": "DEBUG", "component": nil})) > 0
	})
	c.Close()
	for _, r := range logs.find(t, "client disconnected", nil) {
		_, hasErr := r["error"]
		if r["component"] == nil && (r["level"] == "DEBUG") == hasErr {
			t.Errorf("client disconnected: %v, want a clean one at DEBUG without error, others at INFO with it", r)
		}
	}

	var levels []string
	for _, r := range logs.find(t, "connection ended", map[string]any{"component": "mochi"}) {
		levels = append(levels, r["level"].(string))
	}
	if strings.Join(levels, " ") != "DEBUG DEBUG INFO INFO" {
		t.Errorf("connection ended at levels %v, want the abrupt end at DEBUG and the broken clients at INFO", levels)
	}
	for _, r := range logs.records(t) {
		if r["msg"] == "" {
			t.Errorf("a record without a message: %v", r)
		}
		if r["component"] == "mochi" && (r["level"] == "WARN" || r["level"] == "ERROR") {
			t.Errorf("the broker warns: %v", r)
		}
	}
}

// TestRefusalLogLinesAreBounded reproduces issue #25: a refusal's log line
// carried the client's strings whole (a 64 KiB __protVer in the reason, a
// long client id, a __ts in the detail), so a client could fill the disk
// through the logs. Every value of a line is cut to 1 KiB.
func TestRefusalLogLinesAreBounded(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, "", []func(*server.Options){withLog(&logs, slog.LevelDebug)})
	id := "c" + strings.Repeat("i", 20<<10)
	c := e.connect(id)
	huge := strings.Repeat("9", 60<<10)
	c.roundTrip(request{payload: cmd("GET", "k"), user: paho.UserProperties{{Key: "__srcId", Value: id}, {Key: "__protVer", Value: "2." + huge}}})
	c.roundTrip(request{payload: cmd("SET", "k", "v"), ts: "9" + huge + ":0:n"})
	c.roundTrip(request{payload: cmd("SET", "k", "v"), ts: "99999999999999:0:" + huge})
	logs.mu.Lock()
	defer logs.mu.Unlock()
	refused := 0
	for line := range strings.SplitSeq(logs.b.String(), "\n") {
		if strings.Contains(line, `"msg":"request refused"`) {
			refused++
		}
		if len(line) > 6<<10 {
			t.Errorf("a log line of %d bytes: %.300s…", len(line), line)
		}
	}
	if refused != 3 {
		t.Fatalf("%d refusals logged, want 3", refused)
	}
}
