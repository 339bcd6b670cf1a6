package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
)

const readerPolicy = `
rules:
  - principals: {clientIds: ["ssgen-console"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["pub/*"], method: ReadWrite}
      - {keyType: pattern, keys: ["ro/*"], method: Read}
`

func policy(t *testing.T, src string) *server.Policy {
	t.Helper()
	p, err := server.ParsePolicy([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type keysJSON struct {
	Items []struct {
		Name, Ref string
		Folder    bool
		Size      int
		TTLms     int64 `json:"ttl_ms"`
	}
	Next     string
	Examined int
}

func names(p keysJSON) string {
	var s []string
	for _, it := range p.Items {
		s = append(s, it.Name)
	}
	return strings.Join(s, " ")
}

// TestConsoleNeverShowsAKeyItMayNotRead: with an authorization policy,
// the console's identity sees only the keys it may read, in every view:
// the tree, search, details, the trace, the live stream, clients'
// subscriptions and registrations; writes need Write.
func TestConsoleNeverShowsAKeyItMayNotRead(t *testing.T) {
	var pol *server.Policy
	e := newEnv(t, console.Options{Policy: policy(t, readerPolicy)}, func(so *server.Options) { pol = so.Security.Authorization })
	_ = pol
	for _, k := range []string{"pub/a", "ro/b", "secret/c", "secret/d/e"} {
		e.put(k, "v-"+k)
	}
	var p keysJSON
	e.getJSON("/api/keys", &p)
	if got := names(p); got != "pub/ ro/" {
		t.Fatalf("tree: %q", got)
	}
	e.getJSON("/api/keys?flat=1&q="+q("*"), &p)
	if got := names(p); got != "pub/a ro/b" {
		t.Fatalf("search: %q", got)
	}
	e.getJSON("/api/keys?prefix="+q("secret/"), &p)
	if got := names(p); got != "" {
		t.Fatalf("inside a hidden folder: %q", got)
	}
	for _, k := range []string{"secret/c", "nothere"} {
		if st, body, _ := e.do("GET", "/api/key?key="+q(k), ""); st != http.StatusNotFound || !strings.Contains(body, "no such key") {
			t.Fatalf("details of %s: %d %s (a hidden key must look missing)", k, st, body)
		}
	}
	if st, _, _ := e.do("GET", "/api/key?key="+q("ro/b"), ""); st != http.StatusOK {
		t.Fatalf("details of a readable key: %d", st)
	}

	// Requests on hidden keys never reach the trace or the stream.
	next, stop := e.stream("/events")
	defer stop()
	e.srv.Exec(server.ExecRequest{Client: "app", Args: args("SET secret/c hidden")})
	e.srv.Exec(server.ExecRequest{Client: "app", Args: args("GET secret/c")})
	e.srv.Exec(server.ExecRequest{Client: "app", Args: args("SCAN secret/*")})
	e.srv.Exec(server.ExecRequest{Client: "app", Args: args("SET pub/a shown")})
	data := next("trace", "pub/a")
	if strings.Contains(data, "secret") {
		t.Fatalf("stream shows a hidden key: %s", data)
	}
	data = next("keys", "pub/a")
	if strings.Contains(data, "secret") {
		t.Fatalf("key changes show a hidden key: %s", data)
	}
	_, body, _ := e.do("GET", "/api/trace", "")
	if strings.Contains(body, "secret") || !strings.Contains(body, "pub/a") {
		t.Fatalf("trace: %s", body)
	}

	// Writes need Write; a key it may not even read looks missing.
	tok := e.csrf()
	for key, want := range map[string]int{"ro/b": http.StatusForbidden, "secret/c": http.StatusNotFound, "pub/a": http.StatusOK} {
		st, body, _ := e.do("POST", "/api/set", `{"key":"`+q(key)+`","value":"x"}`, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		if st != want {
			t.Errorf("set %s: %d %s, want %d", key, st, body, want)
		}
	}
	if ent, _ := e.srv.Engine().Lookup([]byte("secret/c")); string(ent.Value) != "hidden" {
		t.Fatal("a refused set changed the key")
	}
}

// TestClientsHideNotificationTopicsOfHiddenKeys: a client subscribed to
// the notification topic of one hidden key shows that subscription only
// as hidden; its registrations list only readable keys.
func TestClientsHideNotificationTopicsOfHiddenKeys(t *testing.T) {
	e := newEnv(t, console.Options{Policy: policy(t, readerPolicy)}, nil)
	c := dialRaw(t, e.srv, "watcher", server.NotifyTopic("watcher", []byte("secret/x")), server.NotifyTopic("watcher", []byte("pub/y")))
	_ = c
	e.srv.Exec(server.ExecRequest{Client: "watcher", Args: args("KEYNOTIFY secret/x")})
	e.srv.Exec(server.ExecRequest{Client: "watcher", Args: args("KEYNOTIFY pub/y")})
	var d struct {
		Clients []struct {
			ID            string
			Subscriptions []struct {
				Filter, Key string
				Hidden      bool
			}
			Watches  int
			Watching []struct{ Name string }
		}
	}
	e.getJSON("/api/clients", &d)
	if len(d.Clients) != 1 {
		t.Fatalf("clients: %+v", d)
	}
	cl := d.Clients[0]
	_, body, _ := e.do("GET", "/api/clients", "")
	if strings.Contains(body, "secret") || strings.Contains(body, strings.ToUpper(fmt.Sprintf("%x", "secret/x"))) {
		t.Fatalf("clients show a hidden key: %s", body)
	}
	hidden, shown := 0, 0
	for _, s := range cl.Subscriptions {
		if s.Hidden {
			hidden++
		}
		if s.Key == "pub/y" {
			shown++
		}
	}
	if hidden != 1 || shown != 1 || cl.Watches != 2 || len(cl.Watching) != 1 || cl.Watching[0].Name != "pub/y" {
		t.Fatalf("client %+v", cl)
	}
}

func args(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// TestKeyDetails: value as text and hex, version, fencing token, expiry,
// durability, watchers, and a lock's holder and lease.
func TestKeyDetails(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	eng := e.srv.Engine()
	tok := e.srv.Exec(server.ExecRequest{Client: "app-7", Args: args("SET locks/leader app-7/0123456789abcdef NX PX 60000")}).Version
	if tok.IsZero() {
		t.Fatal("lock SET failed")
	}
	if err := eng.Put([]byte("guarded"), []byte{0xff, 0x00, 'a'}, engine.PutOptions{FencingToken: tok}); err != nil {
		t.Fatal(err)
	}
	e.srv.Exec(server.ExecRequest{Client: "w1", Args: args("KEYNOTIFY guarded")})
	var d struct {
		Name, Hex, Version string
		FencingToken       string `json:"fencing_token"`
		Text               *string
		TTLms              int64 `json:"ttl_ms"`
		Watchers           []string
		Lock               *struct {
			Holder, Client string
			LeaseMs        int64 `json:"lease_ms"`
			FromValue      bool  `json:"from_value"`
		}
		Writable bool
	}
	e.getJSON("/api/key?key=guarded", &d)
	if d.Hex != "ff0061" || d.Text != nil || d.FencingToken != tok.String() || d.TTLms != -1 || strings.Join(d.Watchers, ",") != "w1" || d.Lock != nil || !d.Writable {
		t.Fatalf("guarded: %+v", d)
	}
	e.getJSON("/api/key?key="+q("locks/leader"), &d)
	if d.Lock == nil || d.Lock.Holder != "app-7/0123456789abcdef" || d.Lock.Client != "app-7" || d.Lock.LeaseMs <= 0 || d.Lock.LeaseMs > 60000 || !d.Lock.FromValue {
		t.Fatalf("lock: %+v %+v", d, d.Lock)
	}
}

// TestSetAndDeleteGoThroughTheProtocol: the console's writes are SET and
// DEL with the protocol's rules (fencing included) and show in the trace
// under the console's client id.
func TestSetAndDeleteGoThroughTheProtocol(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	tok := e.csrf()
	post := func(path, body string) string {
		t.Helper()
		st, resp, _ := e.do("POST", path, body, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		if st != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, body, st, resp)
		}
		return resp
	}
	post("/api/set", `{"key":"a%2Fb","value":"00ff","encoding":"hex","ttl_ms":60000}`)
	ent, ok := e.srv.Engine().Lookup([]byte("a/b"))
	if !ok || string(ent.Value) != "\x00\xff" || ent.Deadline.IsZero() {
		t.Fatalf("set: %+v %v", ent, ok)
	}
	fence := e.srv.Exec(server.ExecRequest{Client: "holder", Args: args("SET f v"), FencingToken: ent.Version.String()}).Version
	_ = fence
	if resp := post("/api/delete", `{"key":"f"}`); !strings.Contains(resp, `"ok":false`) || !strings.Contains(resp, "fencing token is required") || !strings.Contains(resp, "fenced by token") {
		t.Fatalf("unfenced delete of a fenced key: %s", resp)
	}
	if resp := post("/api/delete", `{"key":"f","fencing_token":"`+ent.Version.String()+`"}`); !strings.Contains(resp, `"ok":true`) {
		t.Fatalf("fenced delete: %s", resp)
	}
	_, body, _ := e.do("GET", "/api/trace?client="+q("ssgen-console"), "")
	if !strings.Contains(body, `"verb":"DEL","key":"f"`) || !strings.Contains(body, `"console":true`) {
		t.Fatalf("trace of the console's writes: %s", body)
	}
	for _, bad := range []string{`{"key":""}`, `{"key":"k","unknown":1}`, `not json`, `{"key":"k","encoding":"base64"}`, `{"key":"k","value":"zz","encoding":"hex"}`, `{"key":"k","ttl_ms":-5}`} {
		if st, _, _ := e.do("POST", "/api/set", bad, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok); st != http.StatusBadRequest {
			t.Errorf("set %s: %d, want 400", bad, st)
		}
	}
	big := `{"key":"k","value":"` + strings.Repeat("x", 2<<20) + `"}`
	if st, _, _ := e.do("POST", "/api/set", big, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok); st != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB set: %d, want 413", st)
	}
}

// TestTraceFilters: by client glob, key glob and result, with the reason
// of a refusal.
func TestTraceFilters(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	e.srv.Exec(server.ExecRequest{Client: "alpha", Args: args("SET k1 v")})
	e.srv.Exec(server.ExecRequest{Client: "beta", Args: args("SET k2 v")})
	e.srv.Exec(server.ExecRequest{Client: "beta", Args: args("GET k1 extra")})
	var tr struct {
		Events []struct{ Client, Verb, Key, Result, Reason string }
	}
	for query, want := range map[string]string{
		"client=" + q("a*"):   "alpha",
		"key=" + q("k2"):      "beta",
		"result=failed":       "beta",
		"result=ok&key=k1":    "alpha",
		"client=beta&key=k1":  "beta",
		"client=" + q("zz*"):  "",
		"key=" + q("k[12]"):   "alpha beta beta",
		"result=ok&client=be": "",
	} {
		e.getJSON("/api/trace?"+query, &tr)
		var got []string
		for _, ev := range tr.Events {
			got = append(got, ev.Client)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	e.getJSON("/api/trace?result=failed", &tr)
	if len(tr.Events) != 1 || tr.Events[0].Result != "-ERR wrong number of arguments" {
		t.Fatalf("failed: %+v", tr.Events)
	}
}

// TestLiveStreamsAreBounded: beyond MaxStreams a stream is refused (503),
// and one that never reads holds up no request: requests keep being
// served while it sits with a full socket.
func TestLiveStreamsAreBounded(t *testing.T) {
	e := newEnv(t, console.Options{MaxStreams: 2, TraceSize: 256}, nil)
	_, stop1 := e.stream("/events")
	defer stop1()
	// A stream that never reads: a raw connection with a tiny receive
	// buffer that sends the request and nothing else.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(1024)
	fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	waitStreams(t, e, 2)
	if st, _, _ := e.do("GET", "/events", ""); st != http.StatusServiceUnavailable {
		t.Fatalf("a third stream: %d, want 503", st)
	}
	// 20,000 requests with long keys stream ~10 MB at the stalled reader;
	// they all complete (a stall would hang here until the test's own
	// deadline).
	long := strings.Repeat("k", 400)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				if ctx.Err() != nil {
					return
				}
				e.srv.Exec(server.ExecRequest{Client: "load", Args: [][]byte{[]byte("SET"), fmt.Appendf(nil, "%s/%d/%d", long, w, i), []byte("v")}})
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("requests stalled behind a stream that does not read")
	}
}

func waitStreams(t *testing.T, e *env, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d open streams", n), func() bool {
		_, body, _ := e.do("GET", "/metrics", "")
		return strings.Contains(body, fmt.Sprintf("ssgen_console_streams %d\n", n))
	})
}

// TestKeyBrowserStaysBoundedWith100kKeys: one response never holds the
// key space; a page of the root of 100,000 keys in 1,000 folders is a
// few dozen kilobytes, and a search is paged.
func TestKeyBrowserStaysBoundedWith100kKeys(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	eng := e.srv.Engine()
	for i := range 100000 {
		if err := eng.Put(fmt.Appendf(nil, "plant/%03d/line/%02d", i/100, i%100), []byte("value"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, body, _ := e.do("GET", "/api/keys?limit=100000", "")
	if len(body) > 256<<10 {
		t.Fatalf("a page of %d bytes", len(body))
	}
	var p keysJSON
	e.getJSON("/api/keys", &p)
	if names(p) != "plant/" || p.Next != "" {
		t.Fatalf("root: %q next %q", names(p), p.Next)
	}
	e.getJSON("/api/keys?prefix="+q("plant/"), &p)
	if len(p.Items) != 200 || p.Next == "" || !p.Items[0].Folder {
		t.Fatalf("plant/: %d items, next %q", len(p.Items), p.Next)
	}
	e.getJSON("/api/keys?prefix="+q("plant/")+"&from="+p.Next, &p)
	if p.Items[0].Name != "plant/200/" {
		t.Fatalf("second page starts at %q", p.Items[0].Name)
	}
	e.getJSON("/api/keys?flat=1&q="+q("*/line/07"), &p)
	if len(p.Items) == 0 || p.Next == "" || p.Examined > 5000 {
		t.Fatalf("search: %d items, examined %d, next %q", len(p.Items), p.Examined, p.Next)
	}
	// The page itself renders the first page of keys on the server.
	_, html, _ := e.do("GET", "/", "")
	if !strings.Contains(html, `data-ref="plant%2F"`) || len(html) > 64<<10 {
		t.Fatalf("page: %d bytes", len(html))
	}
}

// TestMetrics: the request, error and store metrics, and the probes.
func TestMetrics(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("SET k v")})
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("GET k")})
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("GET k x")})
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("KEYNOTIFY k")})
	_, body, _ := e.do("GET", "/metrics", "")
	for _, want := range []string{
		`ssgen_requests_total{result="ok",verb="SET"} 1`,
		`ssgen_requests_total{result="ok",verb="GET"} 1`,
		`ssgen_requests_total{result="error",verb="GET"} 1`,
		`ssgen_request_errors_total{error="wrong_arguments",verb="GET"} 1`,
		`ssgen_request_duration_seconds_count{verb="SET"} 1`,
		"ssgen_keys 1\n", "ssgen_key_bytes 2\n", "ssgen_watches 1\n", "ssgen_watch_bytes 1\n",
		"ssgen_notifications_sent_total 0\n", "ssgen_connected_clients 0\n",
		"ssgen_persist_commit_duration_seconds_count 0\n", "go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if st, body, _ := e.do("GET", "/readyz", ""); st != http.StatusOK || body != "ready\n" {
		t.Fatalf("readyz: %d %q", st, body)
	}
	_ = e.srv.Close()
	if st, body, _ := e.do("GET", "/readyz", ""); st != http.StatusServiceUnavailable || !strings.Contains(body, "closed") {
		t.Fatalf("readyz after Close: %d %q", st, body)
	}
}

// TestCommitMetrics: with a data directory, each durable commit is timed.
func TestCommitMetrics(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, console.Options{}, func(so *server.Options) { so.DataDir, so.PersistAll = dir, true })
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("SET k v")})
	e.srv.Exec(server.ExecRequest{Client: "c", Args: args("DEL k")})
	_, body, _ := e.do("GET", "/metrics", "")
	for _, want := range []string{"ssgen_persist_commit_duration_seconds_count 2\n", "ssgen_persist_committed_changes_total 2\n", "ssgen_persist_commit_failures_total 0\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestPageStartsConnectingNotOffline: until its live stream connects, the
// page's badge says it is connecting (neutral), not a red "offline": a
// screenshot or a slow link must not report the server down.
func TestPageStartsConnectingNotOffline(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	_, html, _ := e.do("GET", "/", "")
	if !strings.Contains(html, `<span id="live" class="live wait" title="live updates">connecting…</span>`) || strings.Contains(html, "offline") {
		t.Fatalf("page's live badge: %s", html[:min(len(html), 2000)])
	}
}
