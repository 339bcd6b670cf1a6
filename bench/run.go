package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
)

// Names of the baselines in a Report.
const (
	BaselinePahoResponder = "raw-mqtt-paho-responder"
	BaselineInBroker      = "raw-mqtt-in-broker-responder"
)

// Run performs one benchmark run as cfg says and reports it. Failed
// requests are counted in the report, not returned; the error is for a
// run that could not start (bad configuration, no broker, no state store).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	runID := randomHex(4)
	rep := &Report{
		Target: "external", URL: cfg.Broker,
		Clients: cfg.Clients, InFlight: cfg.InFlight,
		ValueSize: cfg.ValueSize, Keys: cfg.Keys,
		Requests: cfg.Requests, Duration: cfg.Duration, Segments: cfg.Segments,
	}
	var srv *server.Server
	if cfg.Attach {
		att, err := server.New(server.Options{Broker: cfg.Broker, Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			err = att.Start()
		}
		if err != nil {
			return nil, fmt.Errorf("bench: attached server: %w", err)
		}
		defer att.Close()
		rep.Target = "external, attached in process"
	}
	var con *console.Console
	if cfg.Broker == "" {
		so := server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
		if cfg.Console {
			if con, err = withConsole(&so); err != nil {
				return nil, fmt.Errorf("bench: console: %w", err)
			}
		}
		srv, err = server.New(so)
		if err == nil {
			err = srv.Start()
		}
		if err != nil {
			return nil, fmt.Errorf("bench: embedded server: %w", err)
		}
		defer srv.Close()
		rep.Target, rep.URL = "embedded", srv.URL()
		if con != nil {
			if err := con.Start(srv); err != nil {
				return nil, fmt.Errorf("bench: console: %w", err)
			}
			defer con.Close()
			rep.Target = "embedded, console serving"
			rep.Console = &ConsoleResult{URL: con.URL()}
		}
	}

	if cfg.Watchers > 0 {
		rep.Mode = "watch"
		rep.Clients, rep.InFlight, rep.Keys, rep.Segments = 1, 1, 1, 1
		err = runWatch(ctx, cfg, rep.URL, runID, rep)
	} else {
		rep.Mode, rep.Mix = "requests", cfg.Mix.String()
		err = runRequests(ctx, cfg, rep, runID, srv)
	}
	rep.Machine = thisMachine()
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// baselineLoads prepares the raw echo through the run's broker, and for
// an embedded server also through a mochi broker answering inside itself.
func baselineLoads(ctx context.Context, cfg Config, brokerURL, runID string, embedded bool) []*workload {
	topic := rawTopicRoot + runID + "/req"
	var out []*workload
	shape := newEchoShape(cfg.BareBaseline, "") // for the replies; each requester has its own
	resp, err := startResponder(ctx, brokerURL, "ssgen-bench-"+runID+"-responder", topic, shape)
	if err != nil {
		out = append(out, &workload{name: BaselinePahoResponder, err: err})
	} else {
		l := echoLoad(ctx, BaselinePahoResponder, brokerURL, topic, runID, cfg, cfg.ValueSize)
		closeEcho := l.close
		l.close = func() { closeEcho(); resp.close() }
		out = append(out, l)
	}
	if embedded {
		eb, err := startEchoBroker(topic, shape)
		if err != nil {
			out = append(out, &workload{name: BaselineInBroker, err: err})
		} else {
			l := echoLoad(ctx, BaselineInBroker, eb.url(), topic, runID+"-in", cfg, cfg.ValueSize)
			closeEcho := l.close
			l.close = func() { closeEcho(); eb.close() }
			out = append(out, l)
		}
	}
	return out
}

// dialClients connects n runtime clients with ids prefix-0, prefix-1, ...
func dialClients(ctx context.Context, brokerURL, prefix string, n int, cfg Config) ([]*runtime.Client, error) {
	clients := make([]*runtime.Client, 0, n)
	for i := range n {
		rc, err := runtime.FromURL(brokerURL)
		if err != nil {
			closeAll(clients)
			return nil, err
		}
		rc.ClientID = prefix + "-" + strconv.Itoa(i)
		rc.Timeout = cfg.Timeout
		rc.WatchBuffer = 1024 // a burst of rounds must not turn into Resyncs
		c, err := runtime.Dial(ctx, rc)
		if err != nil {
			closeAll(clients)
			return nil, fmt.Errorf("bench: connect to %s: %w", brokerURL, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}

func closeAll(cs []*runtime.Client) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); _ = c.Close() }()
	}
	wg.Wait()
}

func benchKeys(runID string, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "ssgen-bench/%s/%07d", runID, i)
	}
	return keys
}

// runRequests is the requests mode, with its baselines when asked.
func runRequests(ctx context.Context, cfg Config, rep *Report, runID string, srv *server.Server) error {
	clients, err := dialClients(ctx, rep.URL, "ssgen-bench-"+runID, cfg.Clients, cfg)
	if err != nil {
		return err
	}
	defer closeAll(clients)
	keys := benchKeys(runID, cfg.Keys)
	value := make([]byte, cfg.ValueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	if err := seed(ctx, clients, srv, keys, value); err != nil {
		return err
	}
	ss := &workload{name: "ssgen", workers: cfg.Clients * cfg.InFlight, do: requestsDo(ctx, cfg, clients, keys, value)}
	loads := []*workload{ss}
	if cfg.Baseline {
		loads = append(loads, baselineLoads(ctx, cfg, rep.URL, runID, srv != nil)...)
	}
	var stream *streamClient
	if rep.Console != nil {
		stream = &streamClient{base: strings.TrimSuffix(rep.Console.URL, "/")}
		withStream := *ss
		withStream.name = "console stream open"
		withStream.before = func() func() {
			if cfg.ConsoleClient != nil {
				return cfg.ConsoleClient(ctx, rep.Console.URL)
			}
			return stream.attach(ctx)
		}
		plain, err := plainLoad(ctx, cfg, runID, keys, value)
		if err != nil {
			return err
		}
		loads = append(loads, &withStream, plain)
	}
	defer func() {
		for _, l := range loads[1:] {
			if l.close != nil {
				l.close()
			}
		}
	}()
	interleave(ctx, cfg, loads)

	d := combine(ss.runs)
	per, all, ops, errs, first := d.merge()
	rep.Elapsed, rep.PerOp, rep.All, rep.Ops, rep.Errors = d.elapsed, per, all, ops, errs
	rep.OpsPerSec, rep.CPUPerOp = rate(ops, d.elapsed), d.perOp(ops)
	if first != nil {
		rep.FirstError = first.Error()
	}
	for _, l := range loads[1:] {
		bl := l.result(rep)
		if c := rep.Console; c != nil && (l.name == c.WithStream.Name || l.name == c.NoConsole.Name) {
			continue
		}
		rep.Baselines = append(rep.Baselines, bl)
	}
	if c := rep.Console; c != nil {
		c.StreamRecords, c.StreamBytes, c.StreamLost = stream.records.Load(), stream.bytes.Load(), stream.lost.Load()
		if c.WithStream.OpsPerSec > 0 && rep.OpsPerSec > 0 {
			c.StreamRatio = c.WithStream.OpsPerSec / rep.OpsPerSec
		}
		if c.NoConsole.OpsPerSec > 0 {
			c.HooksRatio = rep.OpsPerSec / c.NoConsole.OpsPerSec
		}
	}
	return nil
}

// result is a workload's figures as a Baseline row; console workloads
// are also filed in rep.Console.
func (l *workload) result(rep *Report) Baseline {
	{
		bl := Baseline{Name: l.name}
		if l.err != nil {
			bl.FirstError = l.err.Error()
		} else {
			d := combine(l.runs)
			_, all, ops, errs, first := d.merge()
			bl.Elapsed, bl.Ops, bl.Errors, bl.Latency = d.elapsed, ops, errs, all
			bl.OpsPerSec, bl.CPUPerOp = rate(ops, d.elapsed), d.perOp(ops)
			if first != nil {
				bl.FirstError = first.Error()
			}
		}
		if bl.OpsPerSec > 0 {
			bl.Ratio = rep.OpsPerSec / bl.OpsPerSec
		}
		if bl.CPUPerOp > 0 {
			bl.CPURatio = float64(rep.CPUPerOp) / float64(bl.CPUPerOp)
		}
		if c := rep.Console; c != nil {
			switch l.name {
			case "console stream open":
				c.WithStream = bl
			case "no console":
				c.NoConsole = bl
			}
		}
		return bl
	}
}

// plainLoad is the requests workload against a second embedded server
// without a console, with clients and keys of its own.
func plainLoad(ctx context.Context, cfg Config, runID string, keys [][]byte, value []byte) (*workload, error) {
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("bench: server without console: %w", err)
	}
	clients, err := dialClients(ctx, srv.URL(), "ssgen-bench-"+runID+"-plain", cfg.Clients, cfg)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	if err := seed(ctx, clients, srv, keys, value); err != nil {
		closeAll(clients)
		_ = srv.Close()
		return nil, err
	}
	return &workload{
		name: "no console", workers: cfg.Clients * cfg.InFlight,
		do:    requestsDo(ctx, cfg, clients, keys, value),
		close: func() { closeAll(clients); _ = srv.Close() },
	}, nil
}

// requestsDo issues one request of the mix from worker w's client.
func requestsDo(ctx context.Context, cfg Config, clients []*runtime.Client, keys [][]byte, value []byte) func(int, *mrand.Rand) (Op, error) {
	total := cfg.Mix.total()
	return func(w int, rnd *mrand.Rand) (Op, error) {
		c := clients[w%len(clients)]
		key := keys[rnd.IntN(len(keys))]
		switch op := cfg.Mix.pick(rnd.IntN(total)); op {
		case OpSet:
			_, err := c.Set(ctx, key, value, runtime.SetOptions{})
			return op, err
		case OpDel:
			_, _, err := c.Del(ctx, key, runtime.DelOptions{})
			return op, err
		default:
			_, _, err := c.Get(ctx, key)
			if errors.Is(err, runtime.ErrNotFound) {
				err = nil
			}
			return OpGet, err
		}
	}
}

// seed stores every key so that GETs hit: straight into the engine of an
// embedded server, else with SETs from all clients.
func seed(ctx context.Context, clients []*runtime.Client, srv *server.Server, keys [][]byte, value []byte) error {
	if srv != nil {
		for _, k := range keys {
			if err := srv.Engine().Put(k, value, engine.PutOptions{}); err != nil {
				return fmt.Errorf("bench: seed: %w", err)
			}
		}
		return nil
	}
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range 8 * len(clients) {
		c := clients[w%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				if _, err := c.Set(ctx, keys[i], value, runtime.SetOptions{}); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return fmt.Errorf("bench: seed: %w", first)
	}
	return ctx.Err()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
