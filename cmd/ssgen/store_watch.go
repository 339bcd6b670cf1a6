package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "watch", summary: "print the changes of keys as they happen", run: runWatch})
}

const watchUsage = "KEY... [flags]\n\n" +
	"Prints one line per change of any KEY until interrupted:\n" +
	"  SET KEY VALUE VERSION\n" +
	"  DELETE KEY VERSION\n" +
	"  RESYNC KEY VALUE VERSION   (or RESYNC KEY when absent) after changes may have been missed\n" +
	"KEY and VALUE are printed as they are when they consist of printable characters\n" +
	"other than space, '\"' and '\\'; otherwise as Go-quoted strings (\"\" when empty).\n" +
	"--hex prints values, --key-hex keys, as hex instead. --current starts each KEY\n" +
	"with a RESYNC line of its state, read once the watch is registered.\n\n" +
	"With a schema (--schema, $" + schemaEnv + " or ./" + defaultSchemaFile + "), a declared key's VALUE is\n" +
	"decoded: a scalar as its text, anything else as JSON without white space. A value\n" +
	"that does not decode is printed as bytes, with the reason on stderr. --json\n" +
	"prints one JSON object per change instead, with the declaration for declared keys.\n\nflags:"

func runWatch(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "watch", watchUsage)
	var cf connFlags
	cf.register(fs)
	var sf schemaFlags
	sf.register(fs)
	sf.via(ctx, &cf)
	asHex := fs.Bool("hex", false, "print values as hex (implies --raw)")
	asJSON := fs.Bool("json", false, `print JSON lines: {"event":"set"|"delete"|"resync","key":K,"value":V,"version":H,...}`)
	keyHex := fs.Bool("key-hex", false, "KEYs are given, and printed, as hex")
	current := fs.Bool("current", false, "first print each KEY's current state as a RESYNC line")
	fs.BoolVar(&cf.notifyAnyway, "notify-without-subscription", false, "watch even if the broker refuses the notification subscription: for brokers that deliver notifications without one (Azure IoT Operations')")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("want at least one KEY (see ssgen watch --help)")
	}
	keys := make([][]byte, len(pos))
	for i, p := range pos {
		if keys[i], err = keyArg(p, *keyHex); err != nil {
			return err
		}
	}
	sf.raw = sf.raw || *asHex
	res, err := sf.resolver(env)
	if err != nil {
		return err
	}

	c, err := cf.dial(ctx, env, false)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.NotificationsErr(); err != nil {
		return notificationsRefused(c, err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &lineWriter{w: env.stdout}
	f := eventFormat{valueHex: *asHex, keyHex: *keyHex, json: *asJSON, schema: res}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		fatal error
	)
	for _, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := watchKey(ctx, c, env, key, runtime.WatchOptions{Current: *current}, f, out); err != nil {
				once.Do(func() { fatal = err })
				cancel()
			}
		}()
	}
	wg.Wait()
	return fatal
}

// notificationsRefused is the exit-2 error of a connection whose
// notification subscription the broker refused: one message for all the
// keys, saying what to change.
func notificationsRefused(c *runtime.Client, err error) error {
	code := ""
	var be *runtime.BrokerError
	if errors.As(err, &be) {
		code = fmt.Sprintf(" (SUBACK reason 0x%02X)", be.ReasonCode)
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("notifications unavailable: the broker refused client id %q the subscription to its notification topic %s%s, so no key can be watched; "+
		"grant the client that subscription (ssgen authz grants it only to clients named by id), or, on a broker that delivers notifications without one (Azure IoT Operations'), pass --notify-without-subscription",
		c.ClientID(), runtime.NotifyTopicPrefix(c.ClientID())+"+", code)}
}

// errorSettle is how long watchKey holds an error back to learn whether
// the watch ends after it: an error that ends the watch is said in the one
// line that ends it, one the watch survives on its own line.
const errorSettle = 200 * time.Millisecond

// watchEvent is one step of a watch's iteration.
type watchEvent struct {
	ev  runtime.Event
	err error
}

// watchKey prints key's events until ctx ends. An error the iteration
// survives goes to stderr; one that ends it is returned.
func watchKey(ctx context.Context, c *runtime.Client, env *cliEnv, key []byte, opts runtime.WatchOptions, f eventFormat, out *lineWriter) error {
	steps := make(chan watchEvent)
	go func() {
		defer close(steps)
		for ev, err := range c.WatchWith(ctx, key, opts) {
			select {
			case steps <- watchEvent{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	subject := showKey(key, f.keyHex)
	var (
		last    error // the latest error, until an event follows it
		pending error // last, not yet printed
		settle  <-chan time.Time
	)
	say := func() {
		if pending != nil {
			out.warn(env.stderr, "ssgen watch: %s: %s\n", subject, withBrokerHint(env, libErr(pending)))
			pending, settle = nil, nil
		}
	}
	for done := false; !done; {
		select {
		case <-settle:
			say()
			continue
		case st, ok := <-steps:
			if !ok {
				done = true
				continue
			}
			say()
			if errors.Is(st.err, runtime.ErrNotificationsUnavailable) {
				last = st.err // it ends every key's watch: said once, by runWatch
				continue
			}
			if st.err != nil {
				last, pending, settle = st.err, st.err, time.After(errorSettle)
				continue
			}
			last = nil
			line, warn := f.format(st.ev)
			if warn != "" {
				out.warn(env.stderr, "ssgen watch: %s\n", warn)
			}
			if err := out.line(line); err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("write: %w", err)}
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(last, runtime.ErrNotificationsUnavailable) {
		return notificationsRefused(c, last)
	}
	if pending != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: the watch ended: %s", subject, withBrokerHint(env, libErr(pending)))}
	}
	if last != nil {
		// The cause is already on stderr, one line above.
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: the watch ended after the error above", subject)}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s: the watch ended (client closed)", subject)}
}

// lineWriter serializes whole lines from the per-key goroutines and
// flushes each one, so a pipe reader sees events as they happen.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := io.WriteString(l.w, s+"\n"); err != nil {
		return err
	}
	if f, ok := l.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

func (l *lineWriter) warn(w io.Writer, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(w, format, a...)
}

// eventFormat renders watch events as single lines.
type eventFormat struct {
	valueHex, keyHex, json bool
	schema                 *schemaval.Resolver // nil: values are bytes
}

// format renders ev, and returns a warning for stderr when a declared
// key's value does not decode.
func (f eventFormat) format(ev runtime.Event) (line, warn string) {
	m := resolve(f.schema, ev.Key)
	var d decoded
	if ev.Kind == runtime.EventSet || ev.Kind == runtime.EventResync && ev.Found {
		d = decodeValue(m, ev.Value)
		if d.err != nil {
			warn = fmt.Sprintf("%s: value does not fit %s: %v", f.key(ev.Key), describe(m), d.err)
		}
	}
	if f.json {
		return f.jsonLine(ev, m, d), ""
	}
	k := f.key(ev.Key)
	switch ev.Kind {
	case runtime.EventSet:
		return "SET " + k + " " + d.token(f.valueHex) + " " + ev.Version.String(), warn
	case runtime.EventDelete:
		return "DELETE " + k + " " + ev.Version.String(), warn
	case runtime.EventResync:
		if !ev.Found {
			return "RESYNC " + k, warn
		}
		return "RESYNC " + k + " " + d.token(f.valueHex) + " " + ev.Version.String(), warn
	}
	return "UNKNOWN " + k, warn
}

func (f eventFormat) jsonLine(ev runtime.Event, m *schemaval.Match, d decoded) string {
	rec := newRecord(ev.Key, f.keyHex, m)
	switch ev.Kind {
	case runtime.EventSet:
		rec.Event = "set"
	case runtime.EventDelete:
		rec.Event = "delete"
	case runtime.EventResync:
		rec.Event = "resync"
		rec.Found = &ev.Found
	}
	if ev.Kind == runtime.EventSet || ev.Kind == runtime.EventResync && ev.Found {
		if f.valueHex {
			h := hex.EncodeToString(ev.Value)
			rec.ValueHex = &h
		} else {
			rec.setValue(d)
		}
	}
	rec.setVersion(m, ev.Version)
	var b strings.Builder
	_ = writeJSONLine(&b, rec)
	return strings.TrimSuffix(b.String(), "\n")
}

func (f eventFormat) key(b []byte) string { return token(b, f.keyHex) }

// token renders bytes as one space-free field.
func token(b []byte, asHex bool) string {
	if len(b) == 0 {
		return `""`
	}
	if asHex {
		return hex.EncodeToString(b)
	}
	if plain(b) {
		return string(b)
	}
	return strconv.Quote(string(b))
}

// plain reports whether b can be printed as a field without quoting.
func plain(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	s := string(b)
	for _, r := range s {
		if r == '"' || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
