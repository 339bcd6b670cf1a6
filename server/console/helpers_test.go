package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// env is a state store with its console, both on free loopback ports.
type env struct {
	t    *testing.T
	srv  *server.Server
	con  *console.Console
	base string // http://127.0.0.1:PORT (no trailing slash)
	hc   *http.Client
}

// newEnv starts a server and its console; mount, when set, runs before
// the console starts (to mount extra handlers).
func newEnv(t *testing.T, o console.Options, sopts func(*server.Options), mount ...func(*console.Console)) *env {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(servertest.LogWriter(t), nil))
	}
	var con *console.Console
	srv := servertest.New(t, servertest.WithOptions(func(so *server.Options) {
		if sopts != nil {
			sopts(so)
		}
		var err error
		if con, err = console.Install(so, o); err != nil {
			t.Fatal(err)
		}
	}))
	for _, m := range mount {
		m(con)
	}
	if err := con.Start(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = con.Close() })
	return &env{
		t: t, srv: srv, con: con, base: strings.TrimSuffix(con.URL(), "/"),
		hc: &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

func (e *env) put(key, value string) {
	e.t.Helper()
	if err := e.srv.Engine().Put([]byte(key), []byte(value), engine.PutOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// do sends a request and returns its status and body; each hdr is
// "Name: value".
func (e *env) do(method, path, body string, hdr ...string) (int, string, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Add(k, v)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (e *env) getJSON(path string, v any, hdr ...string) {
	e.t.Helper()
	st, body, _ := e.do("GET", path, "", hdr...)
	if st != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, st, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		e.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// csrf fetches the CSRF token of the caller the headers authenticate.
func (e *env) csrf(hdr ...string) string {
	e.t.Helper()
	var s struct{ CSRF string }
	e.getJSON("/api/session", &s, hdr...)
	return s.CSRF
}

func q(s string) string { return url.QueryEscape(s) }

// stream opens /events and returns a function that waits (bounded) for
// the first event named name whose data contains want.
func (e *env) stream(path string, hdr ...string) (next func(name, want string) string, closeFn func()) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.base+path, nil)
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	type ev struct{ name, data string }
	evs := make(chan ev, 1024)
	go func() {
		defer close(evs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				evs <- ev{name, line[6:]}
			}
		}
	}()
	next = func(name, want string) string {
		e.t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case v, ok := <-evs:
				if !ok {
					e.t.Fatalf("stream ended before a %s event with %q", name, want)
				}
				if v.name == name && strings.Contains(v.data, want) {
					return v.data
				}
			case <-deadline:
				e.t.Fatalf("no %s event with %q within 10s", name, want)
			}
		}
	}
	return next, func() { _ = resp.Body.Close() }
}

// dialRaw connects an MQTT 5 client with id to srv and subscribes it to
// filters; it is closed when the test ends.
func dialRaw(t *testing.T, srv *server.Server, id string, filters ...string) *paho.Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	for _, f := range filters {
		if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: f, QoS: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// waitFor polls cond until it holds, failing the test after a generous
// bound: this package's one way to wait for a condition.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, what, cond)
}
