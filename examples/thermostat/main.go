// Command thermostat is ssgen's worked example: two controllers contend for
// a thermostat's owner lease, operators race to change its set point, a
// watcher prints every change, and a frozen controller's late write is
// rejected by fencing. Every state store call goes through the typed
// accessors generated from thermostat/ssgen.yaml.
//
// By default it starts an embedded state store in-process. With --broker
// URL, or the AIO_* variables of Azure IoT Operations, it runs against that
// broker's state store instead.
//
//	go run ./examples/thermostat
//	go run ./examples/thermostat --broker mqtt://127.0.0.1:1883
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
)

func main() {
	var opts options
	flag.StringVar(&opts.broker, "broker", "", "run against the state store of the broker at `URL` (mqtt:// or mqtts://) instead of an embedded one")
	flag.StringVar(&opts.thermostat, "id", "kitchen", "the thermostat `ID`")
	flag.BoolVar(&opts.forever, "forever", false, "keep the standby controller running until interrupted")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "thermostat:", err)
		os.Exit(1)
	}
}

type options struct {
	broker     string
	thermostat string
	forever    bool
	// getenv reads the AIO_* variables (os.Getenv when nil).
	getenv func(string) string
}

// connector dials one client per role, so each role behaves like its own
// process with its own MQTT connection.
type connector struct {
	base runtime.Config
	srv  *server.Server // the embedded state store, if we started one
}

func newConnector(opts options) (*connector, error) {
	getenv := opts.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case opts.broker != "":
		cfg, err := runtime.FromURL(opts.broker)
		return &connector{base: cfg}, err
	case getenv("AIO_BROKER_HOSTNAME") != "":
		cfg, err := runtime.FromEnv()
		return &connector{base: cfg}, err
	}
	srv, err := server.New(server.Options{
		Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	cfg, err := runtime.FromURL(srv.URL())
	return &connector{base: cfg, srv: srv}, err
}

func (c *connector) where() string {
	if c.srv != nil {
		return "an embedded state store at " + c.srv.URL()
	}
	return fmt.Sprintf("the state store of %s:%d", c.base.Host, c.base.Port)
}

func (c *connector) dial(ctx context.Context, role string) (*runtime.Client, error) {
	cfg := c.base
	if cfg.ClientID == "" {
		cfg.ClientID = "thermostat-example"
	}
	cfg.ClientID += "-" + role
	cl, err := runtime.Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	return cl, nil
}

func (c *connector) close() {
	if c.srv != nil {
		_ = c.srv.Close()
	}
}

// printer writes one line per event, each prefixed with the time since the
// start and the speaker, so the interleaving of the roles reads clearly.
type printer struct {
	out   chan string
	done  chan struct{}
	start time.Time
}

func newPrinter(w io.Writer) *printer {
	p := &printer{out: make(chan string, 256), done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(p.done)
		for line := range p.out {
			fmt.Fprintln(w, line)
		}
	}()
	return p
}

func (p *printer) say(who, format string, a ...any) {
	p.out <- fmt.Sprintf("%5.2fs  %-13s %s", time.Since(p.start).Seconds(), who, fmt.Sprintf(format, a...))
}

func (p *printer) close() { close(p.out); <-p.done }

// deadline bounds the whole scenario, so the example ends by itself even
// against a broker that stops answering.
const deadline = 30 * time.Second

func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, deadline)
}
