package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ssgen/ssgen/internal/logclip"
	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// ErrInvalidOptions wraps every problem found in Options.
var ErrInvalidOptions = errors.New("console: invalid options")

// Defaults of Options.
const (
	DefaultTraceSize  = 4096
	DefaultMaxStreams = 16
	// DefaultClientID is the client id the console acts as, for
	// authorization rules and in the trace of its own requests.
	DefaultClientID = "ssgen-console"
)

// Options configure a Console.
type Options struct {
	// Addr is the TCP address to listen on ("127.0.0.1:0" picks a free
	// port). A host that is not a loopback address needs Auth.
	Addr string
	// Auth is how callers authenticate; Token and Passwords are what
	// AuthToken and AuthPassword check.
	Auth      Auth
	Token     string
	Passwords server.Passwords
	// TLS, when set, serves HTTPS.
	TLS *tls.Config
	// AllowedHosts are host names (besides IP literals and localhost) the
	// console answers to without authentication; see Auth.
	AllowedHosts []string
	// Policy is the store's authorization policy (nil: none). The console
	// shows and changes only keys that Principal may read and write under
	// it; with AuthPassword, Principal.Username is the signed-in user.
	Policy    *server.Policy
	Principal server.Principal
	// Pprof serves net/http/pprof under /debug/pprof/ (behind Auth).
	Pprof bool
	// TraceSize is how many requests the trace ring holds
	// (DefaultTraceSize); MaxStreams how many live streams may be open at
	// once (DefaultMaxStreams), more are answered 503.
	TraceSize  int
	MaxStreams int
	// Schema, when set, is the schema the console reads keys through: a
	// declared key shows its declared name and type and its value decoded
	// as generated code decodes it (see Description), a declared lock is
	// shown as one, and the console can write a declared key from JSON.
	Schema *schema.Schema
	// SchemaFromStore reads keys through the schema published in the
	// server itself under the reserved key $ssgen/schema (ssgen schema
	// publish) instead, loaded again whenever that key changes. A value
	// there that is not a published schema (any client allowed to write
	// the key can store anything) is not used: the console then has no
	// schema, and logs and reports why. It excludes Schema.
	SchemaFromStore bool
	// Logger receives the console's own events (slog.Default() when nil).
	Logger *slog.Logger
}

// Description is what a schema says about one key: its declared name, its
// value decoded to JSON, and whether it is a lock (whose value names the
// holder and whose time left to live is the lease's).
type Description struct {
	Name  string `json:"name"`            // the declaration's qualified name ("Thermostat.SetPoint")
	Type  string `json:"type,omitempty"`  // the declared value type and its encoding
	JSON  string `json:"json,omitempty"`  // the value decoded, as JSON; empty when it does not decode
	Error string `json:"error,omitempty"` // why the value does not decode as declared
	Lock  bool   `json:"lock,omitempty"`
	// Guard names the lock that guards the key's writes (its qualified
	// name and concrete key); the console can take it for a write.
	Guard *GuardInfo `json:"guard,omitempty"`
}

// GuardInfo is the guard lock of a declared key.
type GuardInfo struct {
	Name  string `json:"name"` // the lock's qualified name ("Thermostat.Edit")
	Key   string `json:"key"`  // its concrete key, as shown
	TTLms int64  `json:"ttl_ms"`
}

// Console is the web console of one server: key browser, clients, request
// trace, metrics, health. Install it into the server's Options before
// server.New, then Start it with the server.
type Console struct {
	opts    Options
	log     *slog.Logger
	gate    *gate
	trace   *ring[traceRecord]
	changes *ring[changeRecord]
	// metrics is set by Start, while an attached server (external mode)
	// may already be answering requests: the hooks read it atomically.
	metrics atomic.Pointer[metrics]
	streams atomic.Int32
	fixed   *schemaView  // nil without Options.Schema
	store   *storeSchema // nil without Options.SchemaFromStore

	srv    *server.Server
	extra  []mount
	mux    *http.ServeMux
	ln     net.Listener
	hs     *http.Server
	done   chan struct{}
	closed sync.Once
}

// Install checks opts and hooks a new console into so: Options.OnRequest,
// OnKeyChange and OnCommit (hooks already set there keep being called
// first).
func Install(so *server.Options, opts Options) (*Console, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.TraceSize <= 0 {
		opts.TraceSize = DefaultTraceSize
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.Principal.ClientID == "" {
		opts.Principal.ClientID = DefaultClientID
	}
	// Rules may grant keys to the console's client id: no MQTT client may
	// connect with it (server.Options.ReservedClientIDs).
	so.ReservedClientIDs = append(so.ReservedClientIDs, opts.Principal.ClientID)
	c := &Console{
		opts: opts, log: opts.Logger, gate: newGate(&opts),
		trace:   newRing[traceRecord](opts.TraceSize),
		changes: newRing[changeRecord](opts.TraceSize),
		done:    make(chan struct{}),
		fixed:   newSchemaView(opts.Schema),
	}
	if opts.SchemaFromStore {
		c.store = newStoreSchema()
	}
	c.log = logclip.Logger(c.log, 0) // nil: slog.Default(); values cut to 1 KiB
	prevReq, prevChange, prevCommit := so.OnRequest, so.OnKeyChange, so.OnCommit
	so.OnRequest = func(ev *server.RequestEvent) {
		if prevReq != nil {
			prevReq(ev)
		}
		c.onRequest(ev)
	}
	so.OnKeyChange = func(key string, deleted bool) {
		if prevChange != nil {
			prevChange(key, deleted)
		}
		c.onKeyChange(key, deleted)
	}
	so.OnCommit = func(ev server.CommitEvent) {
		if prevCommit != nil {
			prevCommit(ev)
		}
		if m := c.metrics.Load(); m != nil {
			m.commit(ev)
		}
	}
	return c, nil
}

func (o *Options) validate() error {
	if o.Schema != nil && o.SchemaFromStore {
		return fmt.Errorf("%w: Schema and SchemaFromStore exclude each other", ErrInvalidOptions)
	}
	switch o.Auth {
	case AuthNone:
	case AuthToken:
		if len(o.Token) < 16 {
			return fmt.Errorf("%w: a token of at least 16 characters is needed", ErrInvalidOptions)
		}
	case AuthPassword:
		if len(o.Passwords) == 0 {
			return fmt.Errorf("%w: password authentication needs a password file", ErrInvalidOptions)
		}
	default:
		return fmt.Errorf("%w: unknown Auth %d", ErrInvalidOptions, o.Auth)
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("%w: address %q: %v", ErrInvalidOptions, o.Addr, err)
	}
	if o.Auth == AuthNone && !loopbackHost(host) {
		return fmt.Errorf("%w: %s is not a loopback address: the console needs authentication there (token or password)", ErrInvalidOptions, o.Addr)
	}
	return nil
}

// loopbackHost reports whether host names only this machine: a loopback
// IP or "localhost". An empty host or 0.0.0.0 listens on every address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// onRequest is Options.OnRequest: a few atomic adds for the metrics and
// one slot of the trace ring. It never waits for a reader.
func (c *Console) onRequest(ev *server.RequestEvent) {
	if m := c.metrics.Load(); m != nil {
		m.request(ev)
	}
	s, seq := c.trace.begin()
	s.v.record(ev)
	// Only the console's own Server.Exec is the console's: an MQTT client
	// may call itself anything.
	s.v.internal = ev.Exec && ev.Client == c.opts.Principal.ClientID
	s.end(seq)
}

// onKeyChange is Options.OnKeyChange, under the engine's lock: one slot of
// the change ring.
func (c *Console) onKeyChange(key string, deleted bool) {
	if c.store != nil && key == schemastore.Key {
		c.store.stale.Store(true)
	}
	s, seq := c.changes.begin()
	k := key
	s.v.cut = len(k) > maxTraceKey
	if s.v.cut {
		k = k[:maxTraceKey]
	}
	s.v.key = append(s.v.key[:0], k...)
	s.v.deleted = deleted
	s.end(seq)
}

// Start serves the console for srv (the server whose Options Install
// changed) on Options.Addr until Close.
func (c *Console) Start(srv *server.Server) error {
	c.srv = srv
	c.metrics.Store(newMetrics(srv, func() int { return int(c.streams.Load()) }))
	c.mux = c.routes()
	ln, err := net.Listen("tcp", c.opts.Addr)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	if c.opts.TLS != nil {
		cfg := c.opts.TLS.Clone()
		cfg.ClientAuth = tls.NoClientCert // people sign in; certificates are for MQTT clients
		cfg.NextProtos = []string{"h2", "http/1.1"}
		ln = tls.NewListener(ln, cfg)
	}
	c.ln = ln
	c.hs = &http.Server{
		Handler:           c,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(c.log.Handler(), slog.LevelDebug),
	}
	go func() { _ = c.hs.Serve(ln) }()
	c.log.Info("console serving", "url", c.URL(), "auth", c.opts.Auth.String())
	return nil
}

// URL is where the console serves: http(s)://host:port/.
func (c *Console) URL() string {
	scheme := "http"
	if c.opts.TLS != nil {
		scheme = "https"
	}
	addr := c.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, fmt.Sprint(addr.Port)) + "/"
}

// LoginURL is URL with the token that signs a browser in (AuthToken), or
// URL.
func (c *Console) LoginURL() string {
	if c.opts.Auth != AuthToken {
		return c.URL()
	}
	return c.URL() + "login?token=" + c.opts.Token
}

// Close ends the live streams and stops serving.
func (c *Console) Close() error {
	var err error
	c.closed.Do(func() {
		close(c.done)
		if c.hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err = c.hs.Shutdown(ctx); err != nil {
				err = c.hs.Close()
			}
		}
	})
	return err
}

// Handle mounts h at pattern (net/http.ServeMux syntax, e.g.
// "/api/snapshot") behind the console's authentication, Host check,
// cross-site protection (every method but GET, HEAD and OPTIONS needs the
// same-origin checks and the CSRF header, unless authenticated by a
// Bearer token) and security headers. Call it before Start; Access tells
// h which keys its caller may read and write.
func (c *Console) Handle(pattern string, h http.Handler) {
	c.extra = append(c.extra, mount{pattern, h})
}

type mount struct {
	pattern string
	h       http.Handler
}

// Access returns which keys the caller of r may read and write: the
// console's Principal (with the signed-in user under AuthPassword) under
// Options.Policy; nil functions when there is no policy (every key).
func (c *Console) Access(r *http.Request) (readable, writable func(key []byte) bool) {
	if c.opts.Policy == nil {
		return nil, nil
	}
	pr := c.principal(r)
	return func(k []byte) bool { return c.opts.Policy.MayRead(pr, k) },
		func(k []byte) bool { return c.opts.Policy.MayWrite(pr, k) }
}

// Operator returns the caller of r's user name (AuthPassword's signed-in
// user, else Options.Principal's Username; "token" for a Bearer token
// without one, "" otherwise) and whether it may
// change what affects every key alike (the chaos rules, the manual
// clock): always without a policy, and under Options.Policy only when it
// grants the caller write on every key (Policy.MayWriteEvery). Its shape
// is server.ControlHTTP's Caller.
func (c *Console) Operator(r *http.Request) (user string, allowed bool) {
	w, _ := r.Context().Value(whoKey{}).(who)
	user = c.principal(r).Username
	if user == "" && w.bearer {
		user = "token"
	}
	if c.opts.Policy == nil {
		return user, true
	}
	return user, c.opts.Policy.MayWriteEvery(c.principal(r))
}

func (c *Console) principal(r *http.Request) server.Principal {
	pr := c.opts.Principal
	if w, ok := r.Context().Value(whoKey{}).(who); ok && w.user != "" {
		pr.Username = w.user
	}
	return pr
}

func (c *Console) readable(r *http.Request) func([]byte) bool {
	rd, _ := c.Access(r)
	return rd
}

type whoKey struct{}

func (c *Console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.page)
	mux.HandleFunc("GET /assets/{name}", c.asset)
	mux.HandleFunc("GET /api/session", c.apiSession)
	mux.HandleFunc("GET /api/keys", c.apiKeys)
	mux.HandleFunc("GET /api/key", c.apiKey)
	mux.HandleFunc("GET /api/declaration", c.apiDeclaration)
	mux.HandleFunc("GET /api/clients", c.apiClients)
	mux.HandleFunc("GET /api/trace", c.apiTrace)
	mux.HandleFunc("POST /api/set", c.apiSet)
	mux.HandleFunc("POST /api/delete", c.apiDelete)
	mux.HandleFunc("GET /events", c.events)
	mux.Handle("GET /metrics", promhttp.HandlerFor(c.metrics.Load().reg, promhttp.HandlerOpts{}))
	if c.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	for _, m := range c.extra {
		mux.Handle(m.pattern, m.h)
	}
	return mux
}

// ServeHTTP is the console's front door: health probes, sign-in, then
// the Host check, authentication and cross-site protection in front of
// everything else.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if strings.HasPrefix(r.URL.Path, "//") {
		// "$URL/api/clock" with a URL that ends in "/": served as
		// /api/clock, where ServeMux would answer a redirect that
		// curl -X POST does not follow.
		u := *r.URL
		u.Path, u.RawPath = "/"+strings.TrimLeft(u.Path, "/"), ""
		r = r.Clone(r.Context())
		r.URL = &u
	}
	switch r.URL.Path {
	case "/healthz":
		c.healthz(w, r)
		return
	case "/readyz":
		c.readyz(w, r)
		return
	}
	if !c.gate.hostAllowed(r) {
		httpError(w, http.StatusMisdirectedRequest, "host "+r.Host+" is not this console's: open it by IP address or localhost")
		return
	}
	if why := crossSiteFetch(r); why != "" {
		httpError(w, http.StatusForbidden, why)
		return
	}
	switch r.URL.Path {
	case "/login":
		c.login(w, r)
		return
	case "/logout":
		c.logout(w, r)
		return
	}
	caller, err := c.gate.authenticate(r)
	if err != nil {
		if err != errLoginRequired {
			c.busy(w, err)
			return
		}
		c.unauthorized(w, r)
		return
	}
	if !safeMethod(r.Method) {
		if why := c.gate.crossSite(r, caller); why != "" {
			c.log.Warn("console: request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", why)
			httpError(w, http.StatusForbidden, why)
			return
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), whoKey{}, caller))
	c.mux.ServeHTTP(w, r)
}

func (c *Console) unauthorized(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	if c.opts.Auth == AuthPassword {
		w.Header().Set("WWW-Authenticate", `Basic realm="ssgen console", charset="UTF-8"`)
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ssgen console"`)
	}
	httpError(w, http.StatusUnauthorized, "sign in at /login, or authenticate with "+map[Auth]string{AuthToken: "Authorization: Bearer TOKEN", AuthPassword: "HTTP Basic (the MQTT password file)"}[c.opts.Auth])
}

// busy answers a request whose password could not be checked now (no
// check left for its address: 429; no check slot free: 503), telling it
// when to retry: never as a wrong password.
func (c *Console) busy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", retryAfter(err))
	status := http.StatusServiceUnavailable
	if err == errLoginTooMany {
		status = http.StatusTooManyRequests
	}
	httpError(w, status, err.Error())
}

func (c *Console) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func (c *Console) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := c.srv.Ready(); err != nil {
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ready\n"))
}

// httpError answers status with msg on one line of text.
func httpError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(strings.ReplaceAll(msg, "\n", " ") + "\n"))
}
