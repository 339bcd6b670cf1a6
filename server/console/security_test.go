package console_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
)

const testToken = "0123456789abcdef-test-token"

func TestOptionsRefuseAnUnprotectedNonLoopbackAddress(t *testing.T) {
	for _, c := range []struct {
		name string
		o    console.Options
	}{
		{"every address, no auth", console.Options{Addr: "0.0.0.0:0"}},
		{"empty host, no auth", console.Options{Addr: ":0"}},
		{"a LAN address, no auth", console.Options{Addr: "192.0.2.1:0"}},
		{"short token", console.Options{Addr: "127.0.0.1:0", Auth: console.AuthToken, Token: "short"}},
		{"password without users", console.Options{Addr: "127.0.0.1:0", Auth: console.AuthPassword}},
		{"no port", console.Options{Addr: "127.0.0.1"}},
	} {
		var so server.Options
		if _, err := console.Install(&so, c.o); !errors.Is(err, console.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", c.name, err)
		}
	}
	var so server.Options
	if _, err := console.Install(&so, console.Options{Addr: "0.0.0.0:0", Auth: console.AuthToken, Token: testToken}); err != nil {
		t.Errorf("token on every address: %v", err)
	}
}

// TestDNSRebindingIsRefused: without authentication, a page of another
// site whose name was made to resolve to 127.0.0.1 sends its own Host;
// the console answers only IP literals, localhost and allowed names.
func TestDNSRebindingIsRefused(t *testing.T) {
	e := newEnv(t, console.Options{AllowedHosts: []string{"dev.example"}}, nil)
	e.put("k", "v")
	for host, want := range map[string]int{
		"attacker.example:80": http.StatusMisdirectedRequest,
		"attacker.example":    http.StatusMisdirectedRequest,
		"127.0.0.1:1":         http.StatusOK,
		"[::1]:1":             http.StatusOK,
		"localhost:1":         http.StatusOK,
		"dev.example:8080":    http.StatusOK,
	} {
		if st, body, _ := e.do("GET", "/api/keys", "", "Host: "+host); st != want {
			t.Errorf("Host %s: %d %s, want %d", host, st, body, want)
		}
	}
	// Probes answer whatever the Host: they tell nothing.
	if st, _, _ := e.do("GET", "/healthz", "", "Host: attacker.example"); st != http.StatusOK {
		t.Errorf("/healthz: %d", st)
	}
}

// TestCrossSiteWritesAreRefused: a state-changing request a browser
// reports as coming from another origin is refused, and one from a
// browser needs the caller's CSRF token; each refusal changes nothing.
// The headers are those browsers send.
func TestCrossSiteWritesAreRefused(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	e.put("victim", "v")
	tok := e.csrf()
	body := `{"key":"victim"}`
	const json = "Content-Type: application/json"
	for _, c := range []struct {
		name string
		hdr  []string
	}{
		{"a fetch from another site", []string{json, "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site"}},
		{"an HTML form of another site", []string{"Content-Type: application/x-www-form-urlencoded", "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site"}},
		{"another site, with a stolen-looking token", []string{json, "X-Ssgen-Csrf: " + tok, "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site"}},
		{"another origin, older browser (Origin only)", []string{json, "X-Ssgen-Csrf: " + tok, "Origin: http://attacker.example"}},
		{"a same-site page of another origin", []string{json, "X-Ssgen-Csrf: " + tok, "Sec-Fetch-Site: same-site", "Origin: http://127.0.0.1:1"}},
		{"same origin without the CSRF header", []string{json, "Sec-Fetch-Site: same-origin", "Origin: " + e.base}},
		{"same origin with a wrong CSRF header", []string{json, "X-Ssgen-Csrf: forged", "Sec-Fetch-Site: same-origin", "Origin: " + e.base}},
		{"a wrong CSRF header without browser headers", []string{json, "X-Ssgen-Csrf: forged"}},
		{"a null origin (sandboxed frame)", []string{json, "Origin: null"}},
	} {
		st, resp, _ := e.do("POST", "/api/delete", body, c.hdr...)
		if st != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", c.name, st, resp)
		}
		if _, ok := e.srv.Engine().Lookup([]byte("victim")); !ok {
			t.Fatalf("%s: the key was deleted", c.name)
		}
	}
	// Only JSON is read: a form's encodings are refused (415) even with
	// the token.
	if st, _, _ := e.do("POST", "/api/delete", "key=victim", "Content-Type: text/plain", "X-Ssgen-Csrf: "+tok); st != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d, want 415", st)
	}
	st, resp, _ := e.do("POST", "/api/delete", body, json, "X-Ssgen-Csrf: "+tok, "Origin: "+e.base, "Sec-Fetch-Site: same-origin")
	if st != http.StatusOK || !strings.Contains(resp, `"ok":true`) {
		t.Fatalf("same-origin delete: %d %s", st, resp)
	}
	if _, ok := e.srv.Engine().Lookup([]byte("victim")); ok {
		t.Fatal("the same-origin delete did not delete")
	}
	// A program (no browser headers) needs no token.
	e.put("victim", "v")
	if st, resp, _ := e.do("POST", "/api/delete", body, json); st != http.StatusOK || !strings.Contains(resp, `"ok":true`) {
		t.Fatalf("a program's delete: %d %s", st, resp)
	}
}

// TestTokenAuthentication: every endpoint but the probes needs the token,
// as a Bearer header or through a session signed in with it; a session
// cookie does not exempt a write from the CSRF check, a Bearer header
// does (no browser sends one by itself).
func TestTokenAuthentication(t *testing.T) {
	e := newEnv(t, console.Options{Auth: console.AuthToken, Token: testToken}, nil)
	e.put("k", "v")
	for _, path := range []string{"/", "/api/keys", "/api/key?key=k", "/api/clients", "/api/trace", "/events", "/metrics", "/debug/pprof/"} {
		st, _, _ := e.do("GET", path, "")
		if st != http.StatusUnauthorized && !(path == "/" && st == http.StatusSeeOther) {
			t.Errorf("GET %s without a token: %d", path, st)
		}
		if st, _, _ := e.do("GET", path, "", "Authorization: Bearer wrong-token-wrong-token"); st != http.StatusUnauthorized && st != http.StatusSeeOther {
			t.Errorf("GET %s with a wrong token: %d", path, st)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if st, _, _ := e.do("GET", path, ""); st != http.StatusOK {
			t.Errorf("%s: %d", path, st)
		}
	}
	auth := "Authorization: Bearer " + testToken
	if st, _, _ := e.do("GET", "/api/keys", "", auth); st != http.StatusOK {
		t.Fatalf("Bearer: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/set", `{"key":"k","value":"w"}`, auth, "Content-Type: application/json"); st != http.StatusOK {
		t.Fatalf("Bearer set: %d", st)
	}
	// Not signed in by a wrong token in the URL; signed in by the right one.
	if st, _, h := e.do("GET", "/login?token=not-the-token", ""); st != http.StatusUnauthorized || h.Get("Set-Cookie") != "" {
		t.Fatalf("login with a wrong token: %d, cookie %q", st, h.Get("Set-Cookie"))
	}
	st, _, h := e.do("GET", "/login?token="+testToken, "")
	cookie := h.Get("Set-Cookie")
	if st != http.StatusSeeOther || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("login: %d, cookie %q", st, cookie)
	}
	sess := "Cookie: " + strings.Split(cookie, ";")[0]
	if st, _, _ := e.do("GET", "/api/keys", "", sess); st != http.StatusOK {
		t.Fatalf("session: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/delete", `{"key":"k"}`, sess, "Content-Type: application/json", "Sec-Fetch-Site: same-origin"); st != http.StatusForbidden {
		t.Fatalf("session write from the page without CSRF header: %d", st)
	}
	// The CSRF token of one session is worthless in another.
	if st, _, _ := e.do("POST", "/api/delete", `{"key":"k"}`, sess, "Content-Type: application/json", "X-Ssgen-Csrf: "+e.csrf(auth)); st != http.StatusForbidden {
		t.Fatalf("session write with another caller's CSRF token: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/delete", `{"key":"k"}`, sess, "Content-Type: application/json", "X-Ssgen-Csrf: "+e.csrf(sess)); st != http.StatusOK {
		t.Fatalf("session write with its CSRF token: %d", st)
	}
	// Signing out from another site is refused; from the page it ends the session.
	if st, _, _ := e.do("POST", "/logout", "", sess, "Origin: http://attacker.example"); st != http.StatusForbidden {
		t.Fatalf("cross-site logout: %d", st)
	}
	if st, _, _ := e.do("POST", "/logout", "", sess); st != http.StatusSeeOther {
		t.Fatalf("logout: %d", st)
	}
	if st, _, _ := e.do("GET", "/api/keys", "", sess); st != http.StatusUnauthorized {
		t.Fatalf("session after logout: %d", st)
	}
	// A sign-in form posted from another site is refused.
	if st, _, h := e.do("POST", "/login", "token="+testToken, "Content-Type: application/x-www-form-urlencoded", "Origin: http://attacker.example"); st != http.StatusForbidden || h.Get("Set-Cookie") != "" {
		t.Fatalf("cross-site login: %d", st)
	}
}

// TestPasswordAuthentication: the MQTT password file's users sign in
// with a form or HTTP Basic; the signed-in user is the identity the
// authorization rules judge.
func TestPasswordAuthentication(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw-alice"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := server.ParsePasswords(bytes.NewReader([]byte("alice:" + string(hash) + "\n")))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := server.ParsePolicy([]byte(`
rules:
  - principals: {usernames: ["alice"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["alice/*"], method: ReadWrite}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Auth: console.AuthPassword, Passwords: pw, Policy: pol}, nil)
	e.put("alice/a", "1")
	e.put("bob/b", "2")
	if st, _, h := e.do("GET", "/api/keys", "", "Authorization: Basic "+basic("alice", "wrong")); st != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("wrong password: %d", st)
	}
	if st, _, _ := e.do("GET", "/api/keys", "", "Authorization: Basic "+basic("mallory", "pw-alice")); st != http.StatusUnauthorized {
		t.Fatalf("unknown user: %d", st)
	}
	var page struct{ Items []struct{ Name string } }
	e.getJSON("/api/keys?flat=1", &page, "Authorization: Basic "+basic("alice", "pw-alice"))
	if len(page.Items) != 1 || page.Items[0].Name != "alice/a" {
		t.Fatalf("alice sees %+v", page.Items)
	}
	if st, _, h := e.do("POST", "/login", "user=alice&password=nope", "Content-Type: application/x-www-form-urlencoded"); st != http.StatusUnauthorized || h.Get("Set-Cookie") != "" {
		t.Fatalf("form with a wrong password: %d", st)
	}
	st, _, h := e.do("POST", "/login", "user=alice&password=pw-alice", "Content-Type: application/x-www-form-urlencoded", "Origin: "+e.base)
	if st != http.StatusSeeOther || h.Get("Set-Cookie") == "" {
		t.Fatalf("form sign-in: %d", st)
	}
	sess := "Cookie: " + strings.Split(h.Get("Set-Cookie"), ";")[0]
	e.getJSON("/api/keys?flat=1", &page, sess)
	if len(page.Items) != 1 {
		t.Fatalf("alice's session sees %+v", page.Items)
	}
	// A program with Basic credentials writes without a CSRF token; a
	// browser that resends cached Basic credentials from another site is
	// refused.
	alice := "Authorization: Basic " + basic("alice", "pw-alice")
	set := `{"key":"alice%2Fa","value":"2"}`
	if st, body, _ := e.do("POST", "/api/set", set, alice, "Content-Type: application/json"); st != http.StatusOK {
		t.Fatalf("Basic write: %d %s", st, body)
	}
	if st, _, _ := e.do("POST", "/api/set", set, alice, "Content-Type: application/json", "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site"); st != http.StatusForbidden {
		t.Fatalf("cross-site Basic write: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/set", `{"key":"bob%2Fb","value":"2"}`, alice, "Content-Type: application/json"); st != http.StatusNotFound {
		t.Fatalf("alice writing bob's key: %d", st)
	}
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	_, body, h := e.do("GET", "/", "")
	for k, want := range map[string]string{
		"X-Frame-Options":        "DENY",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
	} {
		if h.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, h.Get(k), want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(body, "<script>") {
		t.Error("the page has an inline script (the CSP forbids it)")
	}
}

// TestPprofIsOffUnlessAsked: /debug/pprof/ exists only with Pprof, and
// then behind the authentication.
func TestPprofIsOffUnlessAsked(t *testing.T) {
	e := newEnv(t, console.Options{}, nil)
	if st, _, _ := e.do("GET", "/debug/pprof/", ""); st != http.StatusNotFound {
		t.Fatalf("pprof without the flag: %d", st)
	}
	e = newEnv(t, console.Options{Pprof: true, Auth: console.AuthToken, Token: testToken}, nil)
	if st, _, _ := e.do("GET", "/debug/pprof/", ""); st != http.StatusUnauthorized {
		t.Fatalf("pprof without a token: %d", st)
	}
	if st, _, _ := e.do("GET", "/debug/pprof/", "", "Authorization: Bearer "+testToken); st != http.StatusOK {
		t.Fatalf("pprof with the token: %d", st)
	}
}

// TestMountedHandlersAreProtected: a handler mounted with Handle gets the
// same authentication and cross-site protection, and Access.
func TestMountedHandlersAreProtected(t *testing.T) {
	var got []string
	e := newEnv(t, console.Options{Auth: console.AuthToken, Token: testToken}, nil, func(c *console.Console) {
		c.Handle("/api/extra", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			readable, _ := c.Access(r)
			got = append(got, r.Method)
			if readable != nil {
				t.Error("Access without a policy returned a rule")
			}
		}))
	})
	if st, _, _ := e.do("GET", "/api/extra", ""); st != http.StatusUnauthorized {
		t.Fatalf("unauthenticated: %d", st)
	}
	st, _, h := e.do("GET", "/login?token="+testToken, "")
	if st != http.StatusSeeOther {
		t.Fatal(st)
	}
	sess := "Cookie: " + strings.Split(h.Get("Set-Cookie"), ";")[0]
	if st, _, _ := e.do("POST", "/api/extra", "", sess, "Origin: "+e.base); st != http.StatusForbidden {
		t.Fatalf("session POST from the page without CSRF: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/extra", "", sess, "Origin: http://attacker.example", "X-Ssgen-Csrf: "+e.csrf(sess)); st != http.StatusForbidden {
		t.Fatalf("session POST from another site: %d", st)
	}
	if st, _, _ := e.do("POST", "/api/extra", "", sess, "X-Ssgen-Csrf: "+e.csrf(sess)); st != http.StatusOK {
		t.Fatalf("session POST with CSRF: %d", st)
	}
	if st, _, _ := e.do("GET", "/api/extra", "", sess); st != http.StatusOK {
		t.Fatalf("session GET: %d", st)
	}
	if strings.Join(got, ",") != "POST,GET" {
		t.Fatalf("handler saw %q", got)
	}
}
