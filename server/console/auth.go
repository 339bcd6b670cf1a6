package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/server"
)

// Auth is how the console authenticates people and programs.
type Auth uint8

const (
	// AuthNone lets every request in: only for a loopback address, where
	// the Host check and the cross-site protection still apply.
	AuthNone Auth = iota
	// AuthToken requires Options.Token: as "Authorization: Bearer TOKEN",
	// or once through /login (the form, or ?token= in the URL printed at
	// start) for a browser session.
	AuthToken
	// AuthPassword requires a user and password of Options.Passwords (the
	// MQTT password file): through the /login form for a browser session,
	// or as HTTP Basic authentication for programs.
	AuthPassword
)

func (a Auth) String() string {
	switch a {
	case AuthToken:
		return "token"
	case AuthPassword:
		return "password"
	}
	return "none"
}

// ParseAuth reads "none", "token" or "password".
func ParseAuth(s string) (Auth, bool) {
	for _, a := range []Auth{AuthNone, AuthToken, AuthPassword} {
		if a.String() == s {
			return a, true
		}
	}
	return AuthNone, false
}

const (
	sessionCookie = "ssgen_console"
	csrfHeader    = "X-Ssgen-Csrf"
	// maxSessions bounds the browser sessions kept; signing in beyond it
	// ends the session closest to its end.
	maxSessions = 256
	sessionTTL  = 12 * time.Hour
	// basicCacheTTL is how long a verified Basic credential is taken
	// without a new bcrypt comparison (a Prometheus scrape every 15 s
	// would otherwise cost one each).
	basicCacheTTL = 5 * time.Minute
	maxBasicCache = 64
	// loginSlots bounds concurrent bcrypt comparisons: password guessing
	// cannot take more than that many cores, and a check that finds no
	// slot free within loginWait is answered 503 "busy, retry", never as
	// a wrong password.
	loginSlots = 2
	loginWait  = 3 * time.Second
	// loginBurst password checks may come from one source address at once,
	// then one per loginEvery; beyond, 429 with Retry-After. The table of
	// addresses holds at most maxLoginSources (IPv6 by /64).
	loginBurst      = 10
	loginEvery      = time.Second
	maxLoginSources = 4096
)

// Why a password could not be checked: the caller should retry later,
// told so (Retry-After), not told the password is wrong.
var (
	errLoginBusy     = errors.New("the console is busy checking other sign-ins; retry in a few seconds")
	errLoginTooMany  = errors.New("too many sign-in attempts from this address; retry later")
	errLoginRequired = errors.New("sign in")
)

// who is the authenticated caller of one request.
type who struct {
	user string // AuthPassword: the signed-in user
	// csrfID is what the caller's CSRF token is derived from: the session
	// id, "basic:"+user, or "" for AuthNone.
	csrfID string
	bearer bool // authenticated by an Authorization: Bearer header
}

type session struct {
	user    string
	expires time.Time
}

// gate authenticates requests and protects state-changing ones from
// cross-site requests.
type gate struct {
	auth      Auth
	token     []byte
	passwords server.Passwords
	secure    bool // served over TLS: cookies are Secure
	hosts     map[string]bool
	secret    [32]byte // derives CSRF tokens

	mu       sync.Mutex
	sessions map[string]session
	basic    map[[32]byte]time.Time // sha256(user:password) -> verified until
	slots    chan struct{}
	wait     time.Duration          // loginWait
	sources  map[string]loginBudget // source address -> its password checks left
}

// loginBudget is one source address's token bucket of password checks.
type loginBudget struct {
	tokens float64
	at     time.Time
}

func newGate(o *Options) *gate {
	g := &gate{
		auth: o.Auth, token: []byte(o.Token), passwords: o.Passwords, secure: o.TLS != nil,
		hosts:    map[string]bool{"localhost": true},
		sessions: map[string]session{},
		basic:    map[[32]byte]time.Time{},
		slots:    make(chan struct{}, loginSlots),
		wait:     loginWait,
		sources:  map[string]loginBudget{},
	}
	for _, h := range o.AllowedHosts {
		g.hosts[strings.ToLower(h)] = true
	}
	_, _ = rand.Read(g.secret[:])
	return g
}

// hostAllowed is the defence against DNS rebinding: without
// authentication, a page of another site that made its name resolve to
// this address would otherwise read the console as its own origin. The
// Host must be an IP literal, localhost or one of Options.AllowedHosts.
// With authentication the rebound page has no session and no token, so
// any Host is let through.
func (g *gate) hostAllowed(r *http.Request) bool {
	if g.auth != AuthNone {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if net.ParseIP(host) != nil {
		return true
	}
	return g.hosts[strings.ToLower(host)]
}

// authenticate returns the caller of r; errLoginRequired when r must sign
// in, errLoginBusy or errLoginTooMany when its password could not be
// checked now.
func (g *gate) authenticate(r *http.Request) (who, error) {
	switch g.auth {
	case AuthNone:
		return who{}, nil
	case AuthToken:
		if tok, ok := bearer(r); ok {
			if !g.tokenOK(tok) {
				return who{}, errLoginRequired
			}
			return who{bearer: true}, nil
		}
	case AuthPassword:
		if user, pass, ok := r.BasicAuth(); ok {
			ok, err := g.basicOK(r, user, pass)
			switch {
			case err != nil:
				return who{}, err
			case !ok:
				return who{}, errLoginRequired
			}
			return who{user: user, csrfID: "basic:" + user}, nil
		}
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return who{}, errLoginRequired
	}
	g.mu.Lock()
	s, ok := g.sessions[c.Value]
	if ok && time.Now().After(s.expires) {
		delete(g.sessions, c.Value)
		ok = false
	}
	g.mu.Unlock()
	if !ok {
		return who{}, errLoginRequired
	}
	return who{user: s.user, csrfID: c.Value}, nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

func (g *gate) tokenOK(tok string) bool {
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256(g.token)
	return len(g.token) > 0 && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// basicOK checks a Basic credential: from the cache of recent successes,
// else with bcrypt under the login slots.
func (g *gate) basicOK(r *http.Request, user, pass string) (bool, error) {
	sum := sha256.Sum256([]byte(user + "\x00" + pass))
	now := time.Now()
	g.mu.Lock()
	until, ok := g.basic[sum]
	g.mu.Unlock()
	if ok && now.Before(until) {
		return true, nil
	}
	if ok, err := g.checkPassword(r, user, pass); !ok || err != nil {
		return false, err
	}
	g.mu.Lock()
	if len(g.basic) >= maxBasicCache {
		clear(g.basic)
	}
	g.basic[sum] = now.Add(basicCacheTTL)
	g.mu.Unlock()
	return true, nil
}

// checkPassword compares under a login slot, once r's source address has
// a check left: errLoginTooMany when it has none, errLoginBusy when no
// slot frees up in time. Only a comparison made says the password is
// wrong.
func (g *gate) checkPassword(r *http.Request, user, pass string) (bool, error) {
	if !g.spend(sourceOf(r), time.Now()) {
		return false, errLoginTooMany
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
	case <-t.C:
		return false, errLoginBusy
	case <-r.Context().Done():
		return false, errLoginBusy
	}
	defer func() { <-g.slots }()
	return g.passwords.Check(user, []byte(pass)), nil
}

// spend takes one password check from src's budget: loginBurst at once,
// then one per loginEvery. The table is bounded: when it is full, the
// sources whose budget is whole again are forgotten, and if none is, an
// arbitrary one (map order), so a flood from many addresses cannot grow
// it.
func (g *gate) spend(src string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, ok := g.sources[src]
	if !ok {
		if len(g.sources) >= maxLoginSources {
			for k, v := range g.sources {
				if v.refilled(now) >= loginBurst {
					delete(g.sources, k)
				}
			}
			for k := range g.sources {
				if len(g.sources) < maxLoginSources {
					break
				}
				delete(g.sources, k)
			}
		}
		b = loginBudget{tokens: loginBurst, at: now}
	}
	b.tokens, b.at = b.refilled(now), now
	if b.tokens < 1 {
		g.sources[src] = b
		return false
	}
	b.tokens--
	g.sources[src] = b
	return true
}

func (b loginBudget) refilled(now time.Time) float64 {
	return min(loginBurst, b.tokens+float64(now.Sub(b.at))/float64(loginEvery))
}

// sourceOf is the address password checks are counted by: the remote IP,
// an IPv6 one by its /64 (one host commonly holds a whole /64).
func sourceOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// retryAfter is the Retry-After (seconds) of a password check refused
// with err.
func retryAfter(err error) string {
	if errors.Is(err, errLoginTooMany) {
		return strconv.Itoa(int(loginEvery.Seconds() + 0.999))
	}
	return "2"
}

// newSession signs user in and returns the session id for the cookie.
func (g *gate) newSession(user string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sessions) >= maxSessions {
		oldest := ""
		for k, s := range g.sessions {
			if oldest == "" || s.expires.Before(g.sessions[oldest].expires) {
				oldest = k
			}
		}
		delete(g.sessions, oldest)
	}
	g.sessions[id] = session{user: user, expires: now.Add(sessionTTL)}
	return id
}

func (g *gate) endSession(r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		g.mu.Lock()
		delete(g.sessions, c.Value)
		g.mu.Unlock()
	}
}

func (g *gate) setCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteStrictMode,
	})
}

// csrfToken is the token state-changing requests of w's caller carry in
// the X-Ssgen-Csrf header: an HMAC of the caller's session (or Basic
// user), so it cannot be guessed and is worthless for another session.
func (g *gate) csrfToken(c who) string {
	m := hmac.New(sha256.New, g.secret[:])
	m.Write([]byte("csrf\x00" + c.csrfID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// crossSite says why a state-changing request is refused as possibly
// cross-site, or "" when it is not. Browsers say where a request comes
// from (Sec-Fetch-Site; Origin on every cross-origin POST), so:
//   - a request authenticated by a Bearer header passes: no browser adds
//     that header by itself;
//   - a request a browser reports as coming from another origin is
//     refused;
//   - a request from a browser (either header present) must also carry
//     the caller's CSRF token, which only a page of this origin can read;
//   - a request with neither header is not a browser's (curl, ssgen
//     import, a script) and passes, like Go's CrossOriginProtection
//     lets it: a cookie or cached Basic credential is only ever sent by
//     a browser, and a browser sends those headers.
//
// A CSRF header that is present must be right.
func (g *gate) crossSite(r *http.Request, c who) string {
	if c.bearer {
		return ""
	}
	if why := sameOrigin(r); why != "" {
		return why
	}
	got := r.Header.Get(csrfHeader)
	browser := r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != ""
	switch {
	case got == "" && !browser:
		return ""
	case got == "":
		return "missing " + csrfHeader + " header"
	case !hmac.Equal([]byte(got), []byte(g.csrfToken(c))):
		return "wrong " + csrfHeader + " header"
	}
	return ""
}

// crossSiteFetch refuses what a browser reports (Fetch Metadata) as
// fetched by a page of another site, or of another port of this host,
// unless it is a top-level navigation (a link followed, an address
// typed): without authentication such a page could otherwise make the
// browser read /api/snapshot, /events or the profiler with no user
// action. Requests without the headers (programs, older browsers) pass;
// the cookie of a signed-in browser is SameSite=Strict besides.
func crossSiteFetch(r *http.Request) string {
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "cross-site" && site != "same-site" {
		return ""
	}
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document" {
		return ""
	}
	return "cross-site request refused (Sec-Fetch-Site: " + site + ", not a top-level navigation)"
}

// safeMethod reports whether a method changes nothing.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// securityHeaders are set on every answer: no framing (clickjacking), no
// inline script or style, no referrer (a login URL holds the token), no
// MIME sniffing.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
