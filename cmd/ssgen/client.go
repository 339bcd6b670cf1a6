package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// connFlags are the connection flags every shell client verb shares.
type connFlags struct {
	broker   string
	clientID string
	timeout  time.Duration
}

const connUsage = "--broker mqtt://host:port (else the AIO_* variables), --client-id, --timeout"

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.broker, "broker", "", "broker URL, mqtt://host:port or mqtts://host:port (default: the AIO_* environment variables)")
	fs.StringVar(&c.clientID, "client-id", "", "MQTT client id (default: AIO_MQTT_CLIENT_ID, else a random one)")
	fs.DurationVar(&c.timeout, "timeout", runtime.DefaultTimeout, "bound on connecting and on each request")
}

// config resolves the broker from --broker, else from the AIO_* variables.
// oneShot verbs keep no MQTT session, so a killed process leaves nothing
// behind on the broker; long-running verbs keep the runtime's default so a
// reconnect resumes their session.
func (c *connFlags) config(env *cliEnv, oneShot bool) (runtime.Config, error) {
	if c.timeout <= 0 {
		return runtime.Config{}, usageErrorf("--timeout must be positive, got %s", c.timeout)
	}
	var cfg runtime.Config
	var err error
	switch {
	case c.broker != "":
		cfg, err = runtime.FromURL(c.broker)
	case env.getenv("AIO_BROKER_HOSTNAME") != "":
		// runtime.FromEnv reads the process environment; env.getenv only
		// decides whether the variables are there to be read.
		cfg, err = runtime.FromEnv()
		if err == nil && oneShot && env.getenv("AIO_MQTT_SESSION_EXPIRY") != "" {
			oneShot = false
		}
	default:
		return runtime.Config{}, usageErrorf("no broker: pass --broker mqtt://host:port or set AIO_BROKER_HOSTNAME")
	}
	if err != nil {
		return runtime.Config{}, usageErrorf("%v", err)
	}
	if c.clientID != "" {
		cfg.ClientID = c.clientID
	}
	cfg.Timeout = c.timeout
	cfg.ConnectTimeout = c.timeout
	if oneShot {
		cfg.SessionExpiry = -1
	}
	return cfg, nil
}

// dial connects with the verb's connection flags. Connection failures are
// exit code 2.
func (c *connFlags) dial(ctx context.Context, env *cliEnv, oneShot bool) (*runtime.Client, error) {
	cfg, err := c.config(env, oneShot)
	if err != nil {
		return nil, err
	}
	keepLibraryOffStdout(env)
	cl, err := runtime.Dial(ctx, cfg)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("connect to %s:%d: %w", cfg.Host, cfg.Port, err)}
	}
	return cl, nil
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
	return &exitError{code: code, err: fmt.Errorf("%s: %w", subject, err)}
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

// showKey renders a key for a one-line message.
func showKey(key []byte, isHex bool) string {
	if isHex {
		return hex.EncodeToString(key)
	}
	return strconv.Quote(string(key))
}

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
