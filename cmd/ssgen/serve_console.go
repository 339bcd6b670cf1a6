package main

import (
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"golang.org/x/term"
)

// consoleFlags are serve's flags of the web console.
type consoleFlags struct {
	addr, auth, tokenFile, user, clientID, allowHosts string
	ui, pprof                                         bool
	schema                                            schemaFlags
	// enforce says serve --enforce reads --schema too, console or not.
	enforce bool
}

func (h *consoleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.addr, "http", "", "serve the web console, /metrics, /healthz and /readyz on `HOST:PORT` (a bare :PORT means 127.0.0.1:PORT)")
	fs.BoolVar(&h.ui, "ui", false, "serve the web console on a free loopback port and print its URL (second line of stdout)")
	fs.StringVar(&h.auth, "http-auth", "", "console authentication, `none|token|password`: none (loopback only), token, or password (the --password-file users); default none on loopback, token elsewhere")
	fs.StringVar(&h.tokenFile, "http-token-file", "", "with --http-auth token: read the token from file `F` (default: a random token, printed in the console URL; only when stdout is a terminal)")
	fs.StringVar(&h.user, "http-user", "", "the user `NAME` the console acts as for --authz-file rules (with --http-auth password: the signed-in user)")
	fs.StringVar(&h.clientID, "http-client-id", console.DefaultClientID, "the client `ID` the console acts as for --authz-file rules and in the request trace")
	fs.StringVar(&h.allowHosts, "http-allow-hosts", "", "without authentication, the host names besides localhost and IP addresses the console answers to, a comma-separated `LIST`")
	fs.StringVar(&h.schema.file, "schema", "", "the schema `FILE`: with --http or --ui, the console shows the keys it declares by name, their values decoded as JSON, and its locks as locks; \"store\": the schema published in this server under $ssgen/schema (ssgen schema publish), read again when it changes (default: $"+schemaEnv+", else ./"+defaultSchemaFile+" when there is one); with --enforce, writes are checked against it")
	fs.BoolVar(&h.schema.raw, "raw", false, "with --http or --ui: ignore any schema; the console shows values as text or hex")
	fs.BoolVar(&h.pprof, "pprof", false, "with --http or --ui, also serve Go's profiler under /debug/pprof/ (behind the console's authentication)")
}

func (h *consoleFlags) enabled() bool { return h.addr != "" || h.ui }

// install checks the console flags and hooks a console into so; nil when
// no console was asked for.
func (h *consoleFlags) install(env *cliEnv, so *server.Options) (*console.Console, error) {
	if !h.enabled() {
		if h.pprof || h.auth != "" || h.tokenFile != "" || (h.schema.file != "" && !h.enforce) || h.schema.raw {
			return nil, usageErrorf("--pprof, --http-auth, --http-token-file, --schema and --raw need --http or --ui (--schema also goes with --enforce)")
		}
		return nil, nil
	}
	if h.addr != "" && h.ui {
		return nil, usageErrorf("--http and --ui exclude each other")
	}
	addr := h.addr
	if h.ui {
		addr = "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageErrorf("--http %q: want HOST:PORT or :PORT", h.addr)
	}
	if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
		host = "127.0.0.1"
	}
	o := console.Options{
		Addr: addr, Pprof: h.pprof, Policy: so.Security.Authorization, TLS: so.Security.TLS,
		Principal: server.Principal{ClientID: h.clientID, Username: h.user},
		Logger:    so.Logger,
	}
	if h.allowHosts != "" {
		o.AllowedHosts = strings.Split(h.allowHosts, ",")
	}
	if h.schema.fromStore(env) {
		// The server is the store: the console reads the key from it,
		// again whenever it changes (console.Options.SchemaFromStore).
		o.SchemaFromStore, h.schema.used = true, schemaFromStore
	} else if o.Schema, err = h.schema.load(env); err != nil {
		return nil, err
	}
	h.logSchema(so.Logger, o.Schema)
	switch {
	case h.auth == "" && isLoopback(host):
		o.Auth = console.AuthNone
	case h.auth == "":
		o.Auth = console.AuthToken
	default:
		a, ok := console.ParseAuth(h.auth)
		if !ok {
			return nil, usageErrorf("--http-auth %q: want none, token or password", h.auth)
		}
		o.Auth = a
	}
	switch o.Auth {
	case console.AuthToken:
		if h.tokenFile != "" {
			b, err := os.ReadFile(h.tokenFile)
			if err != nil {
				return nil, usageErrorf("--http-token-file: %v", err)
			}
			o.Token = strings.TrimSpace(string(b))
		} else {
			// The random token is printed on stdout, and a service's stdout
			// goes to its logs, where anyone who reads them would find it.
			if !isTerminal(env.stdout) {
				return nil, usageErrorf("--http-auth token: stdout is not a terminal, and the random token is printed only to one (a service's output goes to its logs); give the token in --http-token-file")
			}
			var b [24]byte
			_, _ = rand.Read(b[:])
			o.Token = base64.RawURLEncoding.EncodeToString(b[:])
		}
	case console.AuthPassword:
		if so.Security.Passwords == nil {
			return nil, usageErrorf("--http-auth password needs --password-file")
		}
		o.Passwords = so.Security.Passwords
	}
	if h.tokenFile != "" && o.Auth != console.AuthToken {
		return nil, usageErrorf("--http-token-file needs --http-auth token")
	}
	c, err := console.Install(so, o)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return c, nil
}

// logSchema says which schema the console reads keys through, or why it
// has none.
func (h *consoleFlags) logSchema(log *slog.Logger, s *schema.Schema) {
	if log == nil {
		log = slog.Default()
	}
	switch {
	case s != nil:
		file := h.schema.used
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		log.Info("console: schema", "file", file, "keys", len(s.AllKeys()), "locks", len(s.AllLocks()))
	case h.schema.raw:
		log.Info("console: no schema (--raw): values shown as text or hex")
	case h.schema.used == schemaFromStore:
		log.Info("console: the schema published in this server under $ssgen/schema, read when it is needed and again when it changes")
	default:
		log.Info("console: no schema (no --schema, $" + schemaEnv + " or ./" + defaultSchemaFile + "): values shown as text or hex")
	}
}

// isTerminal reports whether f (an io.Reader or io.Writer) is a terminal:
// an *os.File whose descriptor is a tty, so /dev/null, a pipe or a file
// is not one.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	// Not file.Fd(): it would put the file in blocking mode, and a
	// prompt's read of stdin could then no longer be interrupted.
	rc, err := file.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	if err := rc.Control(func(fd uintptr) { tty = term.IsTerminal(int(fd)) }); err != nil {
		return false
	}
	return tty
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// announce prints where the console serves: its URL (with the sign-in
// token when one was generated) alone on stdout's second line.
func (h *consoleFlags) announce(env *cliEnv, c *console.Console) {
	if c == nil {
		return
	}
	u := c.URL()
	if h.tokenFile == "" {
		u = c.LoginURL()
	}
	fmt.Fprintln(env.stdout, u)
}
