package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/engine"
)

// Names of the baselines in a Report.
const (
	BaselinePahoResponder = "raw-mqtt-paho-responder"
	BaselineInBroker      = "raw-mqtt-in-broker-responder"
	// BaselineInMemory is the same workload against an embedded server
	// that keeps nothing on disk (Config.Persist: SETs without the
	// property, the server without a data directory).
	BaselineInMemory = "in-memory-store"
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
		Persist: cfg.Persist,
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
		opts := server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}
		if cfg.Console {
			if con, err = withConsole(&opts); err != nil {
				return nil, fmt.Errorf("bench: console: %w", err)
			}
		}
		if cfg.Persist {
			dir, cleanup, err := dataDir(cfg.DataDir)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			opts.DataDir, rep.DataDir = dir, dir
			opts.DirectCommits = cfg.DirectCommits
		}
		if cfg.Server != nil {
			cfg.Server(&opts)
		}
		if srv, err = startEmbedded(opts); err != nil {
			return nil, err
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

// startEmbedded starts an embedded server.
func startEmbedded(opts server.Options) (*server.Server, error) {
	srv, err := server.New(opts)
	if err == nil {
		if err = srv.Start(); err != nil {
			_ = srv.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bench: embedded server: %w", err)
	}
	return srv, nil
}

// dataDir is dir, or a new temporary directory that cleanup removes.
func dataDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "ssgen-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("bench: data dir: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
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
			if ce := (*runtime.ConnectError)(nil); errors.As(err, &ce) {
				return nil, fmt.Errorf("bench: %w", err) // it names the address
			}
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
	keys := benchKeys(runID, cfg.Keys)
	value := make([]byte, cfg.ValueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	ss, err := storeLoad(ctx, cfg, "ssgen", rep.URL, "ssgen-bench-"+runID, srv, keys, value, cfg.Persist)
	if err != nil {
		return err
	}
	defer ss.close()
	loads := []*workload{ss}
	if cfg.Persist && srv != nil {
		loads = append(loads, inMemoryLoad(ctx, cfg, runID, keys, value))
	}
	if cfg.Baseline {
		loads = append(loads, baselineLoads(ctx, cfg, rep.URL, runID, srv != nil)...)
	}
	var stream *streamClient
	if rep.Console != nil {
		stream = &streamClient{base: strings.TrimSuffix(rep.Console.URL, "/")}
		withStream := *ss
		withStream.name, withStream.close = "console stream open", nil
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
	var before server.PersistStats
	if srv != nil {
		before = srv.Stats().Persist
	}
	interleave(ctx, cfg, loads)
	if srv != nil && cfg.Persist {
		rep.Commits = commitResult(before, srv.Stats().Persist)
	}

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

// plainLoad is the requests workload against a second embedded server
// without a console, with clients and keys of its own.
func plainLoad(ctx context.Context, cfg Config, runID string, keys [][]byte, value []byte) (*workload, error) {
	srv, err := startEmbedded(server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	l, err := storeLoad(ctx, cfg, "no console", srv.URL(), "ssgen-bench-"+runID+"-plain", srv, keys, value, cfg.Persist)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	closeClients := l.close
	l.close = func() { closeClients(); _ = srv.Close() }
	return l, nil
}

// commitResult is the group commits between two readings of the totals.
func commitResult(before, after server.PersistStats) *CommitResult {
	c := &CommitResult{
		Commits:   after.Commits - before.Commits,
		Failures:  after.Failures - before.Failures,
		Writes:    after.Writes - before.Writes,
		MaxCommit: after.MaxCommit,
	}
	if n := c.Commits + c.Failures; n > 0 {
		c.MeanCommit = (after.CommitTime - before.CommitTime) / time.Duration(n)
	}
	if c.Commits > 0 {
		c.WritesPerCommit = float64(c.Writes) / float64(c.Commits)
	}
	return c
}

// storeLoad connects cfg.Clients clients to the state store at url, seeds
// keys and returns the workload of cfg.Mix over them; its close
// disconnects the clients. persist makes the SETs (and the seeding of an
// embedded srv) ask for persistence.
func storeLoad(ctx context.Context, cfg Config, name, url, prefix string, srv *server.Server, keys [][]byte, value []byte, persist bool) (*workload, error) {
	clients, err := dialClients(ctx, url, prefix, cfg.Clients, cfg)
	if err != nil {
		return nil, err
	}
	if err := seed(ctx, clients, srv, keys, value, persist); err != nil {
		closeAll(clients)
		return nil, err
	}
	total := cfg.Mix.total()
	return &workload{name: name, workers: cfg.Clients * cfg.InFlight, close: func() { closeAll(clients) }, do: func(w int, rnd *mrand.Rand) (Op, error) {
		c := clients[w%len(clients)]
		key := keys[rnd.IntN(len(keys))]
		switch op := cfg.Mix.pick(rnd.IntN(total)); op {
		case OpSet:
			_, err := c.Set(ctx, key, value, runtime.SetOptions{Persist: persist})
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
	}}, nil
}

// inMemoryLoad is the BaselineInMemory workload: the same clients ×
// in flight, mix and keys against an embedded server without a data
// directory, whose SETs do not ask for persistence.
func inMemoryLoad(ctx context.Context, cfg Config, runID string, keys [][]byte, value []byte) *workload {
	mem, err := startEmbedded(server.Options{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return &workload{name: BaselineInMemory, err: err}
	}
	l, err := storeLoad(ctx, cfg, BaselineInMemory, mem.URL(), "ssgen-bench-"+runID+"-mem", mem, keys, value, false)
	if err != nil {
		_ = mem.Close()
		return &workload{name: BaselineInMemory, err: err}
	}
	closeClients := l.close
	l.close = func() { closeClients(); _ = mem.Close() }
	return l
}

// seed stores every key so that GETs hit: straight into the engine of an
// embedded server, else with SETs from all clients; with persist, as kept
// keys.
func seed(ctx context.Context, clients []*runtime.Client, srv *server.Server, keys [][]byte, value []byte, persist bool) error {
	put := func(c *runtime.Client, k []byte) error {
		_, err := c.Set(ctx, k, value, runtime.SetOptions{Persist: persist})
		return err
	}
	if srv != nil {
		put = func(_ *runtime.Client, k []byte) error {
			return srv.Engine().Put(k, value, engine.PutOptions{Persist: persist})
		}
	}
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	// Several at a time: kept keys share the data file's transactions.
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
				if err := put(c, keys[i]); err != nil {
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
