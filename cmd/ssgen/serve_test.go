package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// serveLog is a stderr that the server's goroutines may write while the
// test reads it.
type serveLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *serveLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *serveLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stopServe cancels a serve verb running in the background and checks
// that it stops promptly with exit code 0.
func stopServe(t *testing.T, cancel context.CancelFunc, done <-chan int, stderr *serveLog) {
	t.Helper()
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

// servedCLI is `ssgen serve` running in the background of a test: its
// stdout (lines, and out to drain the rest), its log, and stop.
type servedCLI struct {
	lines  *bufio.Scanner
	out    io.Reader
	stderr *serveLog
	stop   func()
}

// backgroundServe runs `ssgen args...` (a serve command line) until stop, or
// the test's end: stop cancels it and fails the test unless it exits 0
// within 5 s; calls after the first do nothing.
func backgroundServe(t *testing.T, args ...string) *servedCLI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	s := &servedCLI{lines: bufio.NewScanner(outR), out: outR, stderr: &serveLog{}}
	env := &cliEnv{stdin: strings.NewReader(""), stdout: outW, stderr: s.stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- runCLI(ctx, env, args)
		outW.Close()
	}()
	var once sync.Once
	s.stop = func() { once.Do(func() { stopServe(t, cancel, done, s.stderr) }) }
	t.Cleanup(s.stop)
	return s
}

func TestServeAnswersRequestsAndStopsOnCancel(t *testing.T) {
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--log-level", "debug")

	lines := sp.lines
	if !lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	u, err := url.Parse(lines.Text())
	if err != nil || u.Scheme != "mqtt" || u.Port() == "0" {
		t.Fatalf("printed %q, want mqtt://127.0.0.1:PORT", lines.Text())
	}

	got := serveRequest(t, u.Host, resp3.AppendCommand(nil, []byte("GET"), []byte("k")))
	if got != "$-1\r\n" {
		t.Fatalf("GET answered %q", got)
	}

	sp.stop()
	if s := sp.stderr.String(); !strings.Contains(s, "client connected") || !strings.Contains(s, "shutting down") {
		t.Errorf("log lacks connection or shutdown lines:\n%s", s)
	}
}

// serveRequest sends one state store request with a raw MQTT client and
// returns the response payload.
func serveRequest(t *testing.T, hostport string, payload []byte) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostport, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	c := paho.NewClient(paho.ClientConfig{
		ClientID: "serve-test",
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			select {
			case got <- string(pr.Packet.Payload):
			default:
			}
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: "serve-test", CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(&paho.Disconnect{})
	if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "serve-test/response", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, &paho.Publish{QoS: 1, Topic: server.RequestTopic, Payload: payload, Properties: &paho.PublishProperties{
		ResponseTopic: "serve-test/response", CorrelationData: []byte("0123456789abcdef"),
		User: paho.UserProperties{{Key: "__protVer", Value: "1.0"}},
	}}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		return s
	case <-ctx.Done():
		t.Fatal("no response")
		return ""
	}
}

func TestServeRejectsBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--broker", "mqtt://127.0.0.1:1"},
		{"serve", "--log-level", "loud"},
		{"serve", "--broker", "http://example.com"},
		{"serve", "extra"},
		{"serve", "--max-keys", "-1"},
	} {
		var stderr serveLog
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runCLI(context.Background(), env, args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, stderr.String())
		}
	}
}

// TestServeReadsBrokerLikeTheClientVerbs: serve's --broker takes the forms
// the client verbs take (host:port, a bare host), and says why it refuses
// TLS, user info and an HTTP URL.
func TestServeReadsBrokerLikeTheClientVerbs(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"127.0.0.1:1883", "mqtt://127.0.0.1:1883", ""},
		{"127.0.0.1", "mqtt://127.0.0.1:1883", ""},
		{"mqtt://broker:1884", "mqtt://broker:1884", ""},
		{"tcp://[::1]:1885", "mqtt://[::1]:1885", ""},
		{"mqtts://broker:8883", "", "plain MQTT only (no TLS)"},
		{"mqtt://u:p@broker:1883", "", "without a user name"},
		{"http://127.0.0.1:45553/", "", "speaks HTTP, not MQTT"},
		{"ftp://broker", "", "scheme must be mqtt or mqtts"},
	} {
		got, err := serveBroker(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("serveBroker(%q) = %q, %v; want %q, error with %q", c.in, got, err, c.want, c.err)
		}
	}
}

func TestServeFailsWhenTheBrokerIsUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, broker := range []string{"mqtt://" + addr, addr} {
		var stderr serveLog
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runCLI(context.Background(), env, []string{"serve", "--broker", broker}); code != exitUsage || !strings.Contains(stderr.String(), "cannot connect to broker "+addr) {
			t.Fatalf("--broker %s: exit %d; stderr: %s", broker, code, stderr.String())
		}
	}
}

func TestServeAttachesToAnExternalBroker(t *testing.T) {
	brokerURL := brokertest.Mosquitto(t)
	sp := backgroundServe(t, "serve", "--broker", brokerURL)
	lines := sp.lines
	if !lines.Scan() || lines.Text() != brokerURL {
		t.Fatalf("printed %q, want %q; stderr:\n%s", lines.Text(), brokerURL, sp.stderr)
	}
	u, _ := url.Parse(brokerURL)
	payload := resp3.AppendCommand(nil, []byte("GET"), []byte("k"))
	// The request needs __srcId in external mode; without it the answer is a 400
	// whose payload names the missing property.
	if got := serveRequest(t, u.Host, payload); !strings.Contains(got, "source id") {
		t.Fatalf("answer %q", got)
	}
	sp.stop()
}

// TestServeNamesTheProgramOnItsPort: with the MQTT port taken (Debian's
// mosquitto package starts a broker on 1883), serve says what to do.
func TestServeNamesTheProgramOnItsPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	r := runIn(t, "", nil, "serve", "--listen", addr)
	r.want(t, exitUsage, ptr(""))
	for _, want := range []string{"address already in use", "another program listens on " + addr, "--listen 127.0.0.1:0", "--broker mqtt://" + addr, "stop it"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	if strings.Contains(r.stderr, "mosquitto") { // only 1883 is mosquitto's
		t.Errorf("stderr %q names mosquitto for a port other than 1883", r.stderr)
	}
	for listen, mosquitto := range map[string]bool{"127.0.0.1:1883": true, ":1883": true, "0.0.0.0:18830": false, "[::1]:1883": true} {
		if got := strings.Contains(portTaken(listen), "Debian's mosquitto"); got != mosquitto {
			t.Errorf("portTaken(%q) = %q", listen, portTaken(listen))
		}
	}
	c := runIn(t, "", nil, "serve", "--listen", "127.0.0.1:0", "--http", addr)
	if c.code != exitUsage || !strings.Contains(c.stderr, "--http 127.0.0.1:0") {
		t.Errorf("stderr %q lacks the --http hint", c.stderr)
	}
}

// TestVerbsSayNoStateStoreAnswered: against a broker with no state store
// attached, a verb says so instead of waiting for its whole (default)
// --timeout.
func TestVerbsSayNoStateStoreAnswered(t *testing.T) {
	url := brokertest.Mosquitto(t)
	for _, args := range [][]string{{"get", "k"}, {"set", "k", "v"}, {"keys"}, {"watch", "k"}} {
		r := run(t, url, args...)
		r.want(t, exitUsage, ptr("")) // watch too: one line, the cause and the end of the watch
		if args[0] != "keys" && !strings.Contains(r.stderr, `ssgen `+args[0]+`: "k": `) {
			t.Errorf("%s: stderr %q does not quote the key", args[0], r.stderr)
		}
		if strings.Contains(r.stderr, "--cursor") { // keys: nothing was listed, nothing to resume
			t.Errorf("%s: stderr %q offers a cursor", args[0], r.stderr)
		}
		for _, want := range []string{"no state store answered on " + url, "is ssgen serve running, or attached with --broker?", "a failover (no leader yet)", "give --timeout to wait"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr %q lacks %q", args[0], r.stderr, want)
			}
		}
	}
}

// TestServeBrokerWarnsOnceOfNagle: attached to a stock mosquitto (Nagle's
// algorithm on), serve warns once. --slow-broker 1ns makes any round trip
// slow, so the test asserts no timing; --slow-broker 0 turns the check off.
func TestServeBrokerWarnsOnceOfNagle(t *testing.T) {
	b := brokertest.StartNagle(t)
	sp := backgroundServe(t, "serve", "--broker", b.URL(), "--slow-broker", "1ns", "--log-level", "debug")
	if !sp.lines.Scan() {
		t.Fatalf("no URL printed:\n%s", sp.stderr)
	}
	waitFor(t, "the round trip to be measured", func() bool {
		return strings.Contains(sp.stderr.String(), "broker round trip measured")
	})
	sp.stop()
	if n := strings.Count(sp.stderr.String(), "set_tcp_nodelay true"); n != 1 {
		t.Fatalf("%d warnings naming set_tcp_nodelay, want 1:\n%s", n, sp.stderr)
	}

	off := backgroundServe(t, "serve", "--broker", b.URL(), "--slow-broker", "0", "--log-level", "debug")
	if !off.lines.Scan() {
		t.Fatalf("no URL printed:\n%s", off.stderr)
	}
	off.stop()
	if strings.Contains(off.stderr.String(), "round trip") {
		t.Fatalf("--slow-broker 0 still measured:\n%s", off.stderr)
	}
}

// A --timeout given on the command line is also how long a request waits
// for a state store to attach (a failover of serve --store etcd): only
// the default gives up after one second of "no matching subscribers".
func TestExplicitTimeoutWaitsForAStateStore(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, noServiceWait},
		{[]string{"--timeout", "15s"}, 0},
		{[]string{"--timeout", "10s"}, 0}, // the default's value, but given
		{[]string{"--timeout", "500ms"}, 0},
	} {
		var cf connFlags
		fs := flag.NewFlagSet("set", flag.ContinueOnError)
		cf.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := cf.config(&cliEnv{getenv: func(string) string { return "" }}, true)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.NoServiceWait != tc.want {
			t.Errorf("%v: NoServiceWait %s, want %s", tc.args, cfg.NoServiceWait, tc.want)
		}
	}

	// End to end: a SET sent before any state store attached is answered
	// by the one that attaches.
	b := brokertest.Start(t)
	done := make(chan cliResult, 1)
	go func() { done <- run(t, b.URL(), "set", "--timeout", "15s", "k", "v") }()
	servertest.NewExternal(t, b.URL())
	select {
	case r := <-done:
		r.want(t, exitOK, nil)
	case <-time.After(30 * time.Second):
		t.Fatal("set still waiting 30 s after a state store attached")
	}
	r := run(t, b.URL(), "get", "k")
	r.want(t, exitOK, ptr("v\n"))
}
