package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/schemacheck"
)

func init() {
	register(verb{
		name:    "serve",
		summary: "run a local state store (embedded broker, or --broker URL to attach)",
		run:     runServe,
	})
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "serve", "[--listen HOST:PORT | --broker mqtt://HOST:PORT] [--max-keys N] [--max-bytes N] [--data-dir DIR [--persist-all] [--repair] [--direct-commits] | --broker URL --store etcd://HOST:PORT[,...] [etcd flags]] [limits] [security] [--seed FILE] [--http HOST:PORT | --ui] [--clock real|manual] [--schema FILE --enforce off|warn|refuse] [--chaos FILE] [--chaos-api] [--fault-injection] [--log-level LEVEL] [--log-format text|json]\n\n"+
		"With --broker the store attaches to another MQTT 5 broker as a client. A mosquitto\n"+
		"needs set_tcp_nodelay true in its configuration: without it every request takes\n"+
		"~44 ms (Nagle's algorithm), and serve warns once (see --slow-broker).\n\nflags:")
	listen := fs.String("listen", server.DefaultListen, "the embedded MQTT 5 broker's address, `HOST:PORT` (port 0 picks a free one)")
	broker := fs.String("broker", "", "attach to the MQTT 5 broker at `URL` instead of embedding one: mqtt://host:port or host:port (no TLS: mqtts:// is refused)")
	slowBroker := fs.Duration("slow-broker", server.DefaultSlowBroker, "with --broker: warn once if a message the service sends itself through the broker takes longer than this (0: never)")
	maxKeys := fs.Int("max-keys", 0, "key quota (0 = unlimited)")
	maxBytes := fs.Int64("max-bytes", 0, "quota on the sum of key and value bytes (0 = unlimited)")
	dataDir := fs.String("data-dir", "", "keep keys in a bbolt file in directory `DIR` across restarts: those SET with aio-persistence=true, or all with --persist-all")
	persistAll := fs.Bool("persist-all", false, "with --data-dir, keep every key, not only those SET with aio-persistence=true")
	direct := fs.Bool("direct-commits", false, "with --data-dir: commit each group of kept writes straight into the data file (two fdatasyncs) instead of one write-ahead log record and one fdatasync")
	repair := fs.Bool("repair", false, "with --data-dir, start on a damaged data file: copy its readable keys into a new file, log every key left out, keep the damaged file aside as statestore.db.damaged-TIME")
	var lim server.Limits
	fs.IntVar(&lim.MaxKeyBytes, "max-key-bytes", 0, "longest key any command may name (0 = unlimited)")
	fs.IntVar(&lim.MaxValueBytes, "max-value-bytes", 0, "longest SET value (0 = bounded by --max-packet-bytes only)")
	fs.IntVar(&lim.MaxWatchesPerClient, "max-watches", 0, "KEYNOTIFY registrations per client (0 = 10000, -1 = unlimited)")
	fs.Int64Var(&lim.MaxWatchBytesPerClient, "max-watch-bytes", 0, "sum of the lengths of the keys one client watches (0 = 4 MiB, -1 = unlimited)")
	fs.IntVar(&lim.MaxWatches, "max-watches-total", 0, "KEYNOTIFY registrations of all clients together (0 = 250000, -1 = unlimited)")
	fs.Int64Var(&lim.MaxWatchBytes, "max-watch-bytes-total", 0, "sum of the lengths of the keys all clients watch (0 = 64 MiB, -1 = unlimited)")
	fs.IntVar(&lim.MaxPacketBytes, "max-packet-bytes", 0, "embedded: largest MQTT packet read (0 = 64 MiB, the real broker's default)")
	fs.IntVar(&lim.MaxInflight, "max-inflight", 0, "embedded: Receive Maximum, unacknowledged requests per client (0 = 1024)")
	fs.DurationVar(&lim.ConnectTimeout, "connect-timeout", 0, "embedded: time a new connection has to complete CONNECT, TLS handshake included (0 = 10s)")
	fs.IntVar(&lim.MaxConnectBytes, "max-connect-bytes", 0, "embedded: largest first packet (CONNECT) of a connection (0 = 64 KiB)")
	fs.IntVar(&lim.MaxConnections, "max-conns", 0, "embedded: open connections, beyond them CONNACK 0x97 (0 = 10000, or the open-file limit minus 64)")
	fs.IntVar(&lim.MaxConnectionsPerIP, "max-conns-per-ip", 0, "embedded: open connections from one address (0 = half of --max-conns)")
	fs.DurationVar(&lim.MaxSessionExpiry, "max-session-expiry", 0, "embedded: longest session expiry a client may ask for, announced in CONNACK (0 = 1h)")
	fs.IntVar(&lim.MaxSessions, "max-sessions", 0, "embedded: sessions kept for disconnected clients; past it the oldest ends (0 = 1000)")
	fs.Int64Var(&lim.MaxClientOutputBytes, "max-client-output-bytes", 0, "embedded: unacknowledged response and notification bytes per client before it is disconnected with 0x97 (0 = 64 MiB)")
	tlsCert := fs.String("tls-cert", "", "embedded: serve TLS with the PEM certificate chain in `FILE` (needs --tls-key)")
	tlsKey := fs.String("tls-key", "", "embedded: the `FILE` of --tls-cert's PEM private key")
	tlsClientCA := fs.String("tls-client-ca", "", "embedded: require client certificates signed by the PEM CA bundle in `FILE` (mutual TLS)")
	passwordFile := fs.String("password-file", "", "embedded: authenticate by user name and password, from a `FILE` of lines username:bcrypt-hash")
	allowAnonymous := fs.Bool("allow-anonymous", false, "embedded: let clients without credentials in even with --password-file or --tls-client-ca")
	authzFile := fs.String("authz-file", "", "embedded: the YAML `FILE` of state store authorization rules (who may read or write which keys)")
	clock := fs.String("clock", "real", "the state store's time, `real|manual`: real, or manual (starts at the real time and moves only with ssgen clock advance|set; needs --http or --ui to be moved)")
	chaosFile := fs.String("chaos", "", "start with the chaos rules of this YAML `FILE` (docs/testing.md): matching requests get an -ERR answer, no answer, a held answer or a disconnect; changed at run time with ssgen chaos or the console")
	chaosAPI := fs.Bool("chaos-api", false, "serve the chaos rules' HTTP API (ssgen chaos, the console's chaos form) starting with no rules; --chaos FILE implies it; needs --http or --ui")
	faults := fs.Bool("fault-injection", false, "embedded: honour the fault:* user properties of Microsoft's SDK tests (refuse or disconnect a client on its own request; docs/testing.md); for tests only")
	seed := fs.String("seed", "", "start from this snapshot `FILE` (ssgen export); the store must be empty (a --data-dir holding keys is refused)")
	logLevel := fs.String("log-level", "info", "the least `LEVEL` logged: debug (adds every refused request), info, warn or error")
	logFormat := fs.String("log-format", "text", "the log lines' `FORMAT`: text (key=value lines) or json (one JSON object per line)")
	enforce := fs.String("enforce", "off", "with --schema FILE, check every SET to a declared key against the schema, `off|warn|refuse`: warn logs a value that does not decode as its key's type or breaks a transition rule (immutable, monotonic), refuse answers it with -ERR schema violation naming the declaration and field path (undeclared keys are untouched)")
	var web consoleFlags
	web.register(fs)
	var etcd etcdFlags
	etcd.register(fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["listen"] && given["broker"] {
		return usageErrorf("--listen and --broker exclude each other")
	}
	if err := etcd.check(given); err != nil {
		return err
	}
	if *clock != "real" && *clock != "manual" {
		return usageErrorf("--clock %q: want real or manual", *clock)
	}
	if *clock == "manual" && etcd.store != "" {
		return usageErrorf("--store etcd:// excludes --clock manual")
	}
	if *clock == "manual" && *dataDir != "" {
		return usageErrorf("--clock manual and --data-dir exclude each other: versions written on a clock moved ahead would be kept, and a restarted server would hand out versions clients refuse")
	}
	if *clock == "manual" && !web.enabled() {
		return usageErrorf("--clock manual needs --http or --ui: ssgen clock moves the clock through the HTTP API")
	}
	brokerAddr := ""
	if *broker != "" {
		var err error
		if brokerAddr, err = serveBroker(*broker); err != nil {
			return err
		}
	}
	if *faults && *broker != "" {
		return usageErrorf("--fault-injection needs the embedded broker, not --broker (another broker decides its own acknowledgements): drop --broker and serve with --listen, or use chaos rules (--chaos FILE or --chaos-api), which work with --broker")
	}
	if *chaosAPI && !web.enabled() {
		return usageErrorf("--chaos-api needs --http or --ui: ssgen chaos changes the rules through the HTTP API")
	}
	if *persistAll && *dataDir == "" {
		return usageErrorf("--persist-all needs --data-dir")
	}
	if *repair && *dataDir == "" {
		return usageErrorf("--repair needs --data-dir")
	}
	if *direct && *dataDir == "" {
		return usageErrorf("--direct-commits needs --data-dir")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageErrorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level})
	case "json":
		handler = slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: level})
	default:
		return usageErrorf("--log-format %q: want text or json", *logFormat)
	}
	logger := slog.New(handler)
	if env.getenv("GOGC") == "" {
		// The service's live heap is the store, while every request leaves
		// ~40 KB of garbage (mostly paho's and mochi's packet copies): at
		// the default GOGC=100 a small store is collected every ~150
		// requests and GC takes 15-21 % of the CPU. 400 lets the heap grow
		// to 5x the store before a collection. Measured against `ssgen
		// bench --broker` in another process, 5 alternated pairs against
		// GOGC=100: 4 x 16 GET/SET +8 % ops/s and -10 % p99, 1 x 1 GET
		// p99 -10 % (ops/s within noise); docs/performance.md, finding 1.
		// GOGC and GOMEMLIMIT set by the user still win. Done here and not
		// in package server, whose users own their process.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	var err error

	opts := server.Options{Listen: *listen, Broker: brokerAddr, MaxKeys: *maxKeys, MaxBytes: *maxBytes, Logger: logger, SlowBroker: *slowBroker}
	if *slowBroker <= 0 {
		opts.SlowBroker = -1
	}
	opts.DataDir, opts.PersistAll, opts.Repair, opts.DirectCommits = *dataDir, *persistAll, *repair, *direct
	opts.Limits = lim
	opts.FaultInjection = *faults
	if opts.Enforce, web.enforce = server.ParseEnforce(*enforce); !web.enforce {
		return usageErrorf("--enforce %q: want off, warn or refuse", *enforce)
	}
	if web.enforce = opts.Enforce != server.EnforceOff; web.enforce {
		if web.schema.raw || web.schema.file == "" {
			return usageErrorf("--enforce %s needs --schema FILE (and not --raw)", *enforce)
		}
		if web.schema.fromStore(env) {
			// Whoever may write the key would choose the checks.
			return usageErrorf("--enforce %s needs a schema file: with --schema store any client allowed to write %s could change or switch off the checks", *enforce, schemastore.Key)
		}
		sc, err := web.schema.load(env)
		if err != nil {
			return err
		}
		opts.WriteCheck = schemacheck.New(sc)
		opts.TransitionCheck = schemacheck.Transitions(sc)
		logger.Info("writes checked against the schema", "schema", web.schema.file, "enforce", *enforce)
	}
	if *chaosFile != "" {
		if opts.Chaos, err = server.LoadChaos(*chaosFile); err != nil {
			return usageErrorf("--chaos: %s", libText(err))
		}
	}
	if *clock == "manual" {
		opts.Clock = server.NewManualClock(time.Now())
	}
	if opts.Security, err = serveSecurity(*tlsCert, *tlsKey, *tlsClientCA, *passwordFile, *authzFile, *allowAnonymous); err != nil {
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	if etcd.store != "" {
		return serveEtcd(ctx, env, &etcd, opts, logger)
	}
	con, err := web.install(env, &opts)
	if err != nil {
		return err
	}
	srv, err := server.New(opts)
	if err != nil {
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	if *seed != "" {
		if err := seedServer(srv, *seed); err != nil {
			_ = srv.Close()
			return usageErrorf("--seed %s: %s", *seed, libText(err))
		}
	}
	if err := srv.Start(); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) && *broker == "" {
			return usageErrorf("%s; %s", libText(err), portTaken(*listen))
		}
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	if con != nil {
		// Snapshots (ssgen export, ssgen import) behind the console's
		// authentication and cross-site protection, limited to the keys
		// its caller may read and write.
		con.Handle(snapshotPath, srv.SnapshotHandler(server.SnapshotHTTP{Access: con.Access}))
		// The clock (ssgen clock), behind the same protection.
		// Under --authz-file, only a console identity that may write
		// every key moves the clock or uses the chaos rules (they act on
		// every client and key alike); the log names the user.
		ctl := server.ControlHTTP{Caller: con.Operator}
		con.Handle(clockPath, srv.ClockHandler(ctl))
		if *chaosFile != "" || *chaosAPI {
			con.Handle(chaosPath, srv.ChaosHandler(ctl))
		}
		if err := con.Start(srv); err != nil {
			_ = srv.Close()
			if errors.Is(err, syscall.EADDRINUSE) {
				return usageErrorf("%v; another program listens on the console's address: pick a free port with --http 127.0.0.1:0 (or --ui), or stop it", err)
			}
			return &exitError{code: exitUsage, err: err}
		}
	}
	// The URL on stdout, alone on its line, is the interface for scripts
	// and tests that start the server on port 0; the console's URL, when
	// there is one, is the next line.
	fmt.Fprintln(env.stdout, srv.URL())
	web.announce(env, con)
	// Failure testing changes what clients see: say so once at startup.
	if *faults {
		logger.Warn("fault injection on: clients' fault:* user properties refuse or disconnect them (docs/testing.md)")
	}
	if *clock == "manual" {
		logger.Warn("manual clock: the state store's time moves only with ssgen clock", "now", srv.Now().UTC().Format(time.RFC3339Nano))
	}
	switch n := len(opts.Chaos); {
	case n > 0:
		logger.Warn("chaos rules active: matching requests get an error, no answer, a late answer or a disconnect (ssgen chaos lists them)", "rules", n, "file", *chaosFile)
	case *chaosAPI:
		logger.Warn("chaos API on, no rules yet: ssgen chaos sets rules that give matching requests an error, no answer, a late answer or a disconnect")
	}
	<-ctx.Done()
	logger.Info("shutting down")
	if con != nil {
		_ = con.Close()
	}
	if err := srv.Close(); err != nil {
		return &exitError{code: exitUsage, err: libErr(err)}
	}
	return nil
}

// serveSecurity loads the security files named by serve's flags.
func serveSecurity(cert, key, clientCA, passwordFile, authzFile string, anonymous bool) (server.Security, error) {
	sec := server.Security{AllowAnonymous: anonymous}
	var err error
	switch {
	case cert != "" || key != "":
		if sec.TLS, err = server.LoadTLS(cert, key, clientCA); err != nil {
			return sec, err
		}
	case clientCA != "":
		return sec, fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if passwordFile != "" {
		if sec.Passwords, err = server.LoadPasswords(passwordFile); err != nil {
			return sec, err
		}
	}
	if authzFile != "" {
		if sec.Authorization, err = server.LoadPolicy(authzFile); err != nil {
			return sec, err
		}
	}
	return sec, nil
}

// seedServer loads the snapshot file at path into srv, which has not
// started yet.
func seedServer(srv *server.Server, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = srv.ReadSnapshot(bufio.NewReader(f), engine.ImportEmpty)
	if errors.Is(err, engine.ErrNotEmpty) {
		return fmt.Errorf("the data dir already holds %s, and --seed starts only an empty store (start without --seed, or with an empty --data-dir; ssgen import --merge or --replace loads into a running store)", plural(srv.Engine().Len(), "key"))
	}
	return err
}

// serveBroker reads serve's --broker as the client verbs read theirs
// (parseBroker: mqtt://host:port, host:port, a bare host) and returns the
// mqtt:// URL server.Options.Broker takes. External mode connects without
// TLS and without a user name, so those are refused here, saying so.
func serveBroker(s string) (string, error) {
	cfg, err := parseBroker(s)
	switch {
	case err != nil:
		return "", usageErrorf("--broker: %v", err)
	case cfg.TLS:
		return "", usageErrorf("--broker %q: serve attaches to a broker over plain MQTT only (no TLS): give mqtt://HOST:PORT, or use the embedded broker's --tls-cert for TLS clients", s)
	case cfg.Username != "":
		return "", usageErrorf("--broker %q: serve attaches without a user name or password: drop the user info from the URL", s)
	}
	return "mqtt://" + net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), nil
}

// portTaken says what to do when serve's --listen address is taken. Only
// on the MQTT port is the other program likely a broker (Debian's
// mosquitto package starts one on 1883).
func portTaken(listen string) string {
	who := ""
	if _, port, err := net.SplitHostPort(listen); err == nil && port == "1883" {
		who = " (often a broker: Debian's mosquitto package starts one on 1883)"
	}
	return fmt.Sprintf("another program listens on %s%s: serve on a free port with --listen 127.0.0.1:0, attach to that broker with --broker mqtt://%s, or stop it", listen, who, listen)
}
