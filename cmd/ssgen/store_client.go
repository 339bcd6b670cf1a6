package main

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// connFlags are the connection flags every shell client verb shares.
type connFlags struct {
	broker   string
	caFile   string
	clientID string
	timeout  time.Duration
	source   string // where the broker came from, "" for the default
	// notifyAnyway is watch's --notify-without-subscription.
	notifyAnyway bool
	fs           *flag.FlagSet // where the flags were registered
}

// The broker a shell verb talks to when nothing names one.
const (
	defaultBroker = "mqtt://127.0.0.1:1883"
	brokerEnv     = "SSGEN_BROKER"
)

func (c *connFlags) register(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.broker, "broker", "", "broker `URL`: mqtt://host:port, mqtts://host:port (TLS) or host:port (default: $"+brokerEnv+", else the AIO_* variables, else "+defaultBroker+")")
	fs.StringVar(&c.caFile, "ca-file", "", "with mqtts://: trust the broker certificates signed by the PEM CA bundle in `FILE`, instead of the system's (default: $AIO_TLS_CA_FILE)")
	fs.StringVar(&c.clientID, "client-id", "", "MQTT client `ID` (default: AIO_MQTT_CLIENT_ID, else a random one)")
	fs.DurationVar(&c.timeout, "timeout", runtime.DefaultTimeout, "bound on connecting and on each request; given explicitly, also how long a request waits for a state store to attach (a failover), instead of 1 s")
}

// brokerURL reads a --broker or $SSGEN_BROKER value: a URL, or host:port
// (or a bare host) meaning plain MQTT.
func brokerURL(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return "mqtt://" + s
}

// parseBroker reads a --broker or $SSGEN_BROKER value (see brokerURL). An
// http:// or https:// URL, likely the console's, is refused with the MQTT
// URL to use instead. The error is the message to show after the source.
func parseBroker(s string) (runtime.Config, error) {
	u := brokerURL(s)
	if scheme, _, ok := strings.Cut(u, "://"); ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return runtime.Config{}, fmt.Errorf("%q is an HTTP URL: the server there speaks HTTP, not MQTT: is it ssgen serve's console (--http)? Use the MQTT URL, the first line serve prints", s)
	}
	cfg, err := runtime.FromURL(u)
	if err != nil {
		return runtime.Config{}, errors.New(libText(err))
	}
	return cfg, nil
}

// config resolves the broker: --broker, else $SSGEN_BROKER, else the
// AIO_* variables, else the default. oneShot verbs keep no MQTT session,
// so a killed process leaves nothing behind on the broker; long-running
// verbs keep the runtime's default so a reconnect resumes their session.
func (c *connFlags) config(env *cliEnv, oneShot bool) (runtime.Config, error) {
	if c.timeout <= 0 {
		return runtime.Config{}, usageErrorf("--timeout must be positive, got %s", c.timeout)
	}
	var cfg runtime.Config
	var err error
	switch {
	case c.broker != "":
		c.source = "--broker"
		cfg, err = parseBroker(c.broker)
	case env.getenv(brokerEnv) != "":
		c.source = "$" + brokerEnv
		cfg, err = parseBroker(env.getenv(brokerEnv))
	case env.getenv("AIO_BROKER_HOSTNAME") != "":
		// runtime.FromEnv reads the process environment; env.getenv only
		// decides whether the variables are there to be read.
		c.source = "the AIO_* variables"
		cfg, err = runtime.FromEnv()
		if err == nil && oneShot && env.getenv("AIO_MQTT_SESSION_EXPIRY") != "" {
			oneShot = false
		}
	default:
		c.source = ""
		cfg, err = runtime.FromURL(defaultBroker)
	}
	if err != nil {
		if c.source != "" {
			return runtime.Config{}, usageErrorf("%s: %s", c.source, libText(err))
		}
		return runtime.Config{}, &exitError{code: exitUsage, err: libErr(err)}
	}
	switch {
	case c.caFile != "" && !cfg.TLS:
		return runtime.Config{}, usageErrorf("--ca-file needs a TLS broker (mqtts://HOST:PORT)")
	case c.caFile != "":
		cfg.CAFile = c.caFile
	case cfg.TLS && cfg.CAFile == "" && env.getenv("AIO_TLS_CA_FILE") != "":
		cfg.CAFile = env.getenv("AIO_TLS_CA_FILE")
	}
	if cfg.CAFile != "" {
		if _, err := os.Stat(cfg.CAFile); err != nil {
			return runtime.Config{}, usageErrorf("CA file: %v", err)
		}
	}
	if c.clientID != "" {
		cfg.ClientID = c.clientID
	}
	cfg.Timeout = c.timeout
	cfg.ConnectTimeout = c.timeout
	cfg.NotifyWithoutSubscription = c.notifyAnyway
	cfg.NoServiceWait = min(noServiceWait, c.timeout)
	if c.timeoutGiven() {
		// Whoever names a timeout means to wait that long, also for a
		// state store to attach: a failover of ssgen serve --store etcd
		// leaves no state store on the broker for a few seconds.
		cfg.NoServiceWait = 0
	}
	// A person waiting at a prompt wants a refused connection or a TLS
	// mismatch reported now, not after retrying for --timeout.
	cfg.DialOnce = true
	if oneShot {
		cfg.SessionExpiry = -1
	}
	return cfg, nil
}

// dial connects with the verb's connection flags. Connection failures are
// exit code 2, with what to try.
func (c *connFlags) dial(ctx context.Context, env *cliEnv, oneShot bool) (*runtime.Client, error) {
	cfg, err := c.config(env, oneShot)
	if err != nil {
		return nil, err
	}
	keepLibraryOffStdout(env)
	cl, err := runtime.Dial(ctx, cfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: connectError(cfg, c.source, err)}
	}
	env.broker = displayURL(cfg)
	return cl, nil
}

// timeoutGiven reports whether --timeout was on the command line.
func (c *connFlags) timeoutGiven() bool {
	given := false
	if c.fs != nil {
		c.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "timeout" })
	}
	return given
}

// displayURL is the broker cfg connects to, as a URL for messages.
func displayURL(cfg runtime.Config) string {
	scheme := "mqtt://"
	if cfg.TLS {
		scheme = "mqtts://"
	}
	return scheme + net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
}

// noServiceWait is how long a shell verb's request may hear "no matching
// subscribers" from the broker before it says no state store is there: a
// state store attached to a broker answers within about a second.
const noServiceWait = time.Second

// withBrokerHint is err's message, with the likely cause and next step
// when it means that no state store answered on the broker the verb
// connected to: the broker said nobody subscribes to the request topic,
// or a request got no answer at all.
func withBrokerHint(env *cliEnv, err error) string {
	msg := err.Error()
	if env.broker == "" {
		return msg
	}
	var te *runtime.TimeoutError
	switch {
	case errors.Is(err, runtime.ErrNoService):
		const text = "no state store answered"
		if strings.Contains(msg, text) {
			msg = strings.Replace(msg, text, text+" on "+env.broker, 1)
		} else {
			msg += ": " + text + " on " + env.broker
		}
		return msg + ": is ssgen serve running, or attached with --broker? With ssgen serve --store etcd, a failover (no leader yet) lasts a few seconds: give --timeout to wait that long"
	case errors.As(err, &te) && te.Connected:
		return msg + "; no state store answered on " + env.broker +
			" within --timeout: is ssgen serve running, or attached with --broker? With ssgen serve --store etcd, is there a leader?"
	}
	return msg
}

// connectError says why a connection failed and what to try.
func connectError(cfg runtime.Config, source string, err error) error {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	msg := libText(err)
	if !strings.HasPrefix(msg, "connect ") {
		msg = "connect " + addr + ": " + msg
	}
	var ce *runtime.ConnectError
	isConnect := errors.As(err, &ce)
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	switch {
	case errors.As(err, &unknownCA):
		msg += "; the broker's certificate is signed by an authority this machine does not trust: name its CA's PEM file with --ca-file"
	case errors.As(err, &badName):
		msg += "; the broker's certificate is for other names: connect with a name it holds, or check --broker"
	case isConnect && (ce.Stage == runtime.StageMQTT || ce.Stage == runtime.StageTLS) && speaksHTTP(addr, cfg.ConnectTimeout):
		msg = "connect " + addr + ": the server there speaks HTTP, not MQTT: is it ssgen serve's console (--http)? Use the MQTT URL, the first line serve prints"
	case isConnect && ce.Refused() && source == "":
		msg += "; nothing named a broker (--broker, $" + brokerEnv + ", AIO_BROKER_HOSTNAME), so this was the default " +
			defaultBroker + ": start a local state store with ssgen serve, or name the broker with --broker HOST:PORT"
	case isConnect && ce.Refused():
		msg += " (broker from " + source + "): is the broker running, and listening on that port?"
	case isConnect && ce.ClosedByBroker() && ce.TLS:
		msg += "; if the broker does not use TLS on that port, connect with mqtt://" + addr
	case isConnect && ce.ClosedByBroker():
		msg += "; if the broker expects TLS on that port, connect with mqtts://" + addr + " (or it refused this client: check its log)"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		msg += " (no answer within --timeout " + cfg.ConnectTimeout.String() + ")"
	}
	return &cliError{msg: msg, err: err}
}

// speaksHTTP reports whether the server at addr answers like an HTTP
// server: it is sent the start of an MQTT CONNECT, as the failed
// connection was, and an HTTP server answers "HTTP/1.1 400 Bad Request".
func speaksHTTP(addr string, timeout time.Duration) bool {
	timeout = min(timeout, 2*time.Second)
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	// CONNECT, remaining length 16: protocol "MQTT", level 5, clean start,
	// keep alive 0, no properties, empty client id; then a line end, so
	// that an HTTP server sees a broken request line at once.
	if _, err := conn.Write([]byte("\x10\x10\x00\x04MQTT\x05\x02\x00\x00\x00\x00\x00\r\n\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 5)
	n, _ := io.ReadFull(conn, buf)
	return string(buf[:n]) == "HTTP/"
}

// keepLibraryOffStdout points os.Stdout at stderr when the verb writes to
// the process's real stdout: paho v0.23.0 has a stray fmt.Println, and a
// script reading our stdout must see results only. The verb keeps its own
// handle on the real stdout in env.stdout.
func keepLibraryOffStdout(env *cliEnv) {
	if f, ok := env.stdout.(*os.File); ok && f == os.Stdout {
		os.Stdout = os.Stderr
	}
}

// opError maps a runtime error to the verb's exit code: a missing key, an
// unmet condition or a stale fencing token is a negative answer (1),
// anything else a failure (2). subject names the key for the message.
func opError(subject string, err error) error {
	code := exitUsage
	switch {
	case errors.Is(err, runtime.ErrNotFound),
		errors.Is(err, runtime.ErrConditionNotMet),
		errors.Is(err, runtime.ErrFencingTokenLowerVersion),
		errors.Is(err, runtime.ErrFencingTokenRequired):
		code = exitNegative
	}
	return &exitError{code: code, err: &cliError{msg: subject + ": " + libText(err), err: err}}
}

// keyArg decodes a key given on the command line, as text or as hex.
func keyArg(s string, isHex bool) ([]byte, error) {
	if !isHex {
		if s == "" {
			return nil, usageErrorf("empty key")
		}
		return []byte(s), nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, usageErrorf("key %q is not hex: %v", s, err)
	}
	if len(b) == 0 {
		return nil, usageErrorf("empty key")
	}
	return b, nil
}

// showKey renders a key for a one-line message: quoted (or hex), and a
// key longer than maxShownKey bytes cut there, with its length.
func showKey(key []byte, isHex bool) string {
	more := ""
	if len(key) > maxShownKey {
		key, more = key[:maxShownKey], fmt.Sprintf("… (%d bytes)", len(key))
	}
	if isHex {
		return hex.EncodeToString(key) + more
	}
	return strconv.Quote(string(key)) + more
}

// maxShownKey bounds the bytes of a key a message shows.
const maxShownKey = 256

// fencingArg parses --fencing-token; empty means none.
func fencingArg(s string) (hlc.HLC, error) {
	if s == "" {
		return hlc.HLC{}, nil
	}
	h, err := hlc.Parse(s)
	if err != nil {
		return hlc.HLC{}, usageErrorf("--fencing-token: %v", err)
	}
	return h, nil
}

// parseArgs parses flags placed anywhere among the positional arguments,
// as users of `ssgen set KEY VALUE --px 10s` expect. A "--" ends the
// flags. When stopAfter > 0, the positional argument after the first
// stopAfter ones starts tail, which is returned untouched (a command line
// to run, whose own flags are not ours).
//
// A bad flag is reported as one line (by the caller's exit error) rather
// than the flag package's message followed by the whole usage text.
func parseArgs(fs *flag.FlagSet, args []string, stopAfter int) (pos, tail []string, help bool, err error) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() {
		fs.Usage = usage
		fs.SetOutput(out)
		if help {
			fs.Usage()
		}
	}()
	for {
		if help, err = parseFlags(fs, args); help || err != nil {
			return nil, nil, help, err
		}
		consumed := len(args) - fs.NArg()
		rest := fs.Args()
		if consumed > 0 && args[consumed-1] == "--" {
			for len(rest) > 0 && (stopAfter == 0 || len(pos) < stopAfter) {
				pos, rest = append(pos, rest[0]), rest[1:]
			}
			if len(rest) == 0 {
				rest = nil
			}
			return pos, rest, false, nil
		}
		if len(rest) == 0 {
			return pos, nil, false, nil
		}
		if stopAfter > 0 && len(pos) == stopAfter {
			return pos, rest, false, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(fs *flag.FlagSet, pos []string, n int, names string) error {
	if len(pos) != n {
		return usageErrorf("want %s, got %d argument(s) (see ssgen %s --help)", names, len(pos), fs.Name())
	}
	return nil
}
