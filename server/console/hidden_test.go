package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
)

// TestKeyListingIsNoOracleForHiddenKeys reproduces issue #25's attack on
// /api/keys: a listing that stopped on a hidden key named it in "next"
// (and in the page's data-next), and "examined" counted hidden keys, so
// bisecting with ?prefix= and ?from= recovered every hidden name. Now a
// prefix (or a from) that holds only hidden keys is answered exactly as
// one that holds nothing, and no answer names a hidden key.
func TestKeyListingIsNoOracleForHiddenKeys(t *testing.T) {
	e := newEnv(t, console.Options{Policy: policy(t, readerPolicy)}, nil)
	eng := e.srv.Engine()
	for i := range 5000 { // more than one page's budget of examined keys
		if err := eng.Put(fmt.Appendf(nil, "secret/k%05d", i), []byte("s"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.put("pub/a", "v")
	e.put("pub/zz", "v")
	e.put("pub/m", "v")
	e.put("ro/b", "v")
	get := func(path string) string {
		t.Helper()
		st, body, _ := e.do("GET", path, "")
		if st != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, st, body)
		}
		if strings.Contains(body, "secret") {
			t.Fatalf("GET %s names a hidden key: %s", path, body)
		}
		return body
	}
	same := func(a, b string) {
		t.Helper()
		if x, y := get(a), get(b); x != y {
			t.Fatalf("GET %s and GET %s differ:\n%s\n%s", a, b, x, y)
		}
	}
	// A folder of hidden keys is an empty folder, whatever the page size.
	for _, lim := range []string{"", "&limit=1", "&limit=1000"} {
		same("/api/keys?prefix="+q("secret/")+lim, "/api/keys?prefix="+q("nothing/")+lim)
		same("/api/keys?prefix="+q("secret/k0")+lim, "/api/keys?prefix="+q("nothing/k0")+lim)
		same("/api/keys?flat=1&q="+q("secret/*")+lim, "/api/keys?flat=1&q="+q("nothing/*")+lim)
		same("/api/keys?flat=1&q="+q("*k01*")+lim, "/api/keys?flat=1&q="+q("*nothing*")+lim)
	}
	// Starting at a hidden key, or just before one, is starting at the
	// next visible key.
	same("/api/keys?flat=1&from="+q("secret/k00100"), "/api/keys?flat=1&from="+q("secret/k00100x"))
	same("/api/keys?flat=1&from="+q("ro/c"), "/api/keys?flat=1&from="+q("secret/k04999"))
	// A page that fills before the hidden keys continues at the next
	// visible key, never at a hidden one.
	body := get("/api/keys?flat=1&limit=3")
	if !strings.Contains(body, `"next":"ro%2Fb"`) {
		t.Fatalf("first page of 3: %s", body)
	}
	body = get("/api/keys?flat=1&limit=4")
	if strings.Contains(body, `"next"`) {
		t.Fatalf("the last visible key ends the listing: %s", body)
	}
	// The page rendered on the server carries the same cursor.
	st, html, _ := e.do("GET", "/", "")
	if st != http.StatusOK || strings.Contains(html, "secret") {
		t.Fatalf("page: %d, names a hidden key: %v", st, strings.Contains(html, "secret"))
	}
}

// TestConsoleClientIDCannotBeBorrowed reproduces issue #25: an MQTT client
// connected as "ssgen-console" read the keys the rules grant only to the
// console. The console reserves its client id: the embedded broker
// refuses it (CONNACK 0x86), the --http-client-id one included.
func TestConsoleClientIDCannotBeBorrowed(t *testing.T) {
	for _, id := range []string{"", "ops-console"} {
		pol := strings.ReplaceAll(readerPolicy, "ssgen-console", console.DefaultClientID+`", "ops-console`)
		e := newEnv(t, console.Options{Policy: policy(t, pol), Principal: server.Principal{ClientID: id}}, nil)
		e.put("ro/b", "granted to the console")
		if id == "" {
			id = console.DefaultClientID
		}
		conn, err := net.DialTimeout("tcp", e.srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c := paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ack, err := c.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30})
		cancel()
		_ = conn.Close()
		if err == nil || ack == nil || ack.ReasonCode != 0x86 {
			t.Fatalf("an MQTT client connected as the console's id %q: %v %+v", id, err, ack)
		}
	}
}

// TestWrongPasswordFloodAnswersRetry: a flood of wrong passwords from one
// address is cut off with 429 and Retry-After once its budget is spent,
// and then even the right password is answered "retry", never "wrong
// password" (issue #25).
func TestWrongPasswordFloodAnswersRetry(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw-alice"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := server.ParsePasswords(strings.NewReader("alice:" + string(hash) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Auth: console.AuthPassword, Passwords: pw}, nil)
	limited := false
	for i := 0; i < 100 && !limited; i++ {
		st, body, h := e.do("GET", "/api/keys", "", "Authorization: Basic "+basic("alice", fmt.Sprint("guess", i)))
		switch st {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			if h.Get("Retry-After") == "" || !strings.Contains(body, "retry") {
				t.Fatalf("429 without Retry-After: %v %q", h, body)
			}
			limited = true
		default:
			t.Fatalf("guess %d: %d %s", i, st, body)
		}
	}
	if !limited {
		t.Fatal("100 wrong passwords from one address, none refused as too many")
	}
	st, body, h := e.do("POST", "/login", "user=alice&password=pw-alice", "Content-Type: application/x-www-form-urlencoded", "Origin: "+e.base)
	if st != http.StatusTooManyRequests || h.Get("Retry-After") == "" || strings.Contains(body, "Wrong") {
		t.Fatalf("the right password during the flood: %d %q", st, body)
	}
}

// TestCrossSiteReadsAreRefused reproduces issue #25: with --http-auth none
// a page of another site could make a browser GET /api/snapshot, /events or
// the profiler (an <img>, a fetch in no-cors mode, an EventSource). A
// request a browser reports as another site's is refused unless it is a
// top-level navigation; same-origin requests, navigations and programs
// pass.
func TestCrossSiteReadsAreRefused(t *testing.T) {
	var srv *server.Server // set once started; the handler runs only after
	e := newEnv(t, console.Options{Pprof: true}, nil, func(c *console.Console) {
		c.Handle("/api/snapshot", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			srv.SnapshotHandler(server.SnapshotHTTP{Access: c.Access}).ServeHTTP(w, r)
		}))
	})
	srv = e.srv
	sub := []string{"Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: image"}
	for _, path := range []string{"/api/snapshot", "/events", "/debug/pprof/", "/api/keys", "/metrics", "/"} {
		for _, hdr := range [][]string{
			sub,
			{"Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: cors", "Sec-Fetch-Dest: empty"},
			{"Sec-Fetch-Site: same-site", "Sec-Fetch-Mode: no-cors", "Sec-Fetch-Dest: script"},
			{"Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: iframe"},
		} {
			if st, _, _ := e.do("GET", path, "", hdr...); st != http.StatusForbidden {
				t.Errorf("GET %s with %q: %d, want 403", path, hdr, st)
			}
		}
	}
	for _, hdr := range [][]string{
		nil,
		{"Sec-Fetch-Site: same-origin", "Sec-Fetch-Mode: cors", "Sec-Fetch-Dest: empty"},
		{"Sec-Fetch-Site: none", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"},
		{"Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate", "Sec-Fetch-Dest: document"},
	} {
		if st, _, _ := e.do("GET", "/", "", hdr...); st != http.StatusOK {
			t.Errorf("GET / with %q: %d, want 200", hdr, st)
		}
	}
	if st, _, _ := e.do("GET", "/healthz", "", sub...); st != http.StatusOK {
		t.Errorf("health probe: %d", st)
	}
}
