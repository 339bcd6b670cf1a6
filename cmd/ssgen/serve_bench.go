package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/pprof"

	"github.com/ssgen/ssgen/bench"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/schemacheck"
)

func init() {
	register(verb{
		name:    "bench",
		summary: "measure a state store's throughput and latency, against a raw-MQTT baseline in the same run",
		run:     runBench,
	})
}

func runBench(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "bench", "[--broker mqtt://HOST:PORT [--attach]] [--clients N] [--in-flight M] [--mix get=50,set=50,del=0] "+
		"[--requests N | --duration D] [--watchers N --watch-clients M] [--persist [--data-dir DIR] [--direct-commits]] [--baseline [--bare-baseline]] [--console] [--json]")
	def := bench.Defaults()
	broker := fs.String("broker", "", "the `URL` of a broker a state store serves on (a running ssgen serve, or a broker with one attached); default: an embedded server in this process")
	attach := fs.Bool("attach", false, "with --broker: start a state store in this process attached to that broker (external mode)")
	persist := fs.Bool("persist", false, "SETs ask for persistence (aio-persistence=true); the embedded server gets a data dir, and the same load also runs against an in-memory embedded server for the ratio")
	dataDir := fs.String("data-dir", "", "with --persist and no --broker: the embedded server's data directory `DIR` (default: a new temporary directory, removed afterwards)")
	direct := fs.Bool("direct-commits", false, "with --persist and no --broker: the embedded server commits each group straight into its data file (ssgen serve --direct-commits)")
	clients := fs.Int("clients", def.Clients, "client connections")
	inFlight := fs.Int("in-flight", def.InFlight, "requests each client keeps in flight")
	mixSpec := fs.String("mix", def.Mix.String(), "operation weights, `get=N,set=N,del=N`")
	valueSize := fs.Int("value-size", def.ValueSize, "bytes of every SET value")
	keys := fs.Int("keys", def.Keys, "size of the key space (seeded before the run, so GETs hit)")
	requests := fs.Int("requests", 0, fmt.Sprintf("stop after this many requests (watch mode: SET rounds); %d when neither bound is given", def.Requests))
	duration := fs.Duration("duration", 0, "stop after this long")
	warmup := fs.Int("warmup", 20, "unrecorded requests per worker before the clock starts")
	watchers := fs.Int("watchers", 0, "watch mode: watchers of one key; each round one SET, latency measured to every notification")
	watchClients := fs.Int("watch-clients", def.WatchClients, "watch mode: client connections the watchers are spread over")
	baseline := fs.Bool("baseline", false, "also run a raw MQTT 5 QoS 1 echo through the same broker, same clients × in flight, and print the ratio")
	bare := fs.Bool("bare-baseline", false, "with --baseline: the echo's packets carry only response topic and correlation data, not the protocol envelope's properties")
	segments := fs.Int("segments", 5, "split the run into this many segments, ssgen and each baseline taking turns, so that a busy machine's noise hits them alike")
	timeout := fs.Duration("timeout", def.Timeout, "bound of each request, and of each watch round's wait")
	con := fs.Bool("console", false, "embedded only: serve the web console and compare, in the same run, no live stream open, one stream open as a browser keeps it, and a server without a console")
	schemaFile := fs.String("schema", "", "embedded only: check the embedded server's SETs against the schema `FILE` (with --enforce); declare the bench's keys, ssgen-bench/{run}/{n}, to measure the check")
	enforce := fs.String("enforce", "off", "embedded only, with --schema: the embedded server's mode, `off|warn|refuse`, as ssgen serve --enforce")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (client and embedded server) to `FILE`")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the whole run to `FILE`")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	mix, err := bench.ParseMix(*mixSpec)
	if err != nil {
		return usageErrorf("--mix: %v", err)
	}
	cfg := bench.Config{
		Broker: optionalBrokerURL(*broker), Attach: *attach, Persist: *persist, DataDir: *dataDir, DirectCommits: *direct, Clients: *clients, InFlight: *inFlight, Mix: mix,
		ValueSize: *valueSize, Keys: *keys, Requests: *requests, Duration: *duration,
		Warmup: *warmup, Watchers: *watchers, WatchClients: *watchClients,
		Baseline: *baseline, BareBaseline: *bare, Segments: *segments, Timeout: *timeout,
		Console: *con,
	}
	for name, v := range map[string]int{"clients": *clients, "in-flight": *inFlight, "value-size": *valueSize,
		"keys": *keys, "requests": *requests, "segments": *segments, "warmup": *warmup, "watchers": *watchers, "watch-clients": *watchClients} {
		if v < 0 {
			return usageErrorf("--%s must not be negative", name)
		}
	}
	mode, ok := server.ParseEnforce(*enforce)
	switch {
	case !ok:
		return usageErrorf("--enforce %q: want off, warn or refuse", *enforce)
	case (*schemaFile != "") != (mode != server.EnforceOff):
		return usageErrorf("--schema and --enforce warn|refuse go together")
	case *schemaFile != "" && *broker != "":
		return usageErrorf("--schema and --enforce need the embedded server, not --broker")
	case *schemaFile != "":
		sc, err := loadSchema(env, *schemaFile)
		if err != nil {
			return err
		}
		check, transitions := schemacheck.New(sc), schemacheck.Transitions(sc)
		cfg.Server = func(o *server.Options) { o.Enforce, o.WriteCheck, o.TransitionCheck = mode, check, transitions }
	}
	if *duration < 0 || *timeout <= 0 {
		return usageErrorf("--duration must not be negative and --timeout must be positive")
	}

	stopProfile, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		return usageErrorf("%v", err)
	}
	rep, err := bench.Run(ctx, cfg)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		err = benchError{err}
		if errors.Is(err, bench.ErrInvalidConfig) {
			return usageErrorf("%v", err)
		}
		return &exitError{code: exitUsage, err: err}
	}
	if *asJSON {
		err = rep.WriteJSON(env.stdout)
	} else {
		err = rep.WriteText(env.stdout)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	// Failures are in the report; the exit code lets scripts notice them.
	if rep.Errors > 0 || rep.Watch != nil && rep.Watch.Missed > 0 {
		return &exitError{code: exitNegative, err: fmt.Errorf("%d failed requests, %d missed notifications", rep.Errors, missed(rep))}
	}
	return nil
}

func missed(r *bench.Report) int {
	if r.Watch == nil {
		return 0
	}
	return r.Watch.Missed
}

// startProfiles starts the CPU profile and returns what ends both; the
// allocation profile is written at the end, after a GC, so that it counts
// every allocation of the run.
func startProfiles(cpuPath, memPath string) (func() error, error) {
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return nil, err
		}
		cpu = f
	}
	if memPath != "" {
		goruntime.MemProfileRate = 4096 // finer than the default 512 KiB, the run is short
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return err
			}
		}
		if memPath == "" {
			return nil
		}
		goruntime.GC()
		f, err := os.Create(memPath)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}, nil
}

// benchError drops the "bench: " that package bench puts before its
// messages (right for a library error), and the runtime's "statestore: "
// after it, since the CLI already says "ssgen bench: ", so the message
// reads the verb once.
type benchError struct{ err error }

func (e benchError) Error() string { return libText(e.err) }
func (e benchError) Unwrap() error { return e.err }

// optionalBrokerURL is brokerURL, keeping "" (no broker) as it is.
func optionalBrokerURL(s string) string {
	if s == "" {
		return ""
	}
	return brokerURL(s)
}
