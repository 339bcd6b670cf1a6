package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/server"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// Defaults of Config.
const (
	DefaultPrefix   = "/ssgen/"
	DefaultLeaseTTL = 3 * time.Second
	// MinLeaseTTL is the shortest lease etcd grants with its default
	// timing (1.5 × its 1 s election timeout, in whole seconds); it makes
	// a shorter one that long.
	MinLeaseTTL         = 2 * time.Second
	DefaultDialTimeout  = 10 * time.Second
	DefaultTxnTimeout   = 5 * time.Second
	DefaultCompactEvery = time.Minute
	// DefaultCompactBytes is how many bytes the leader writes between two
	// compactions driven by volume: the history etcd keeps stays below
	// two of them (16 MiB) whatever the write rate.
	DefaultCompactBytes = 8 << 20
	// clockEvery is how often the leader writes its clock's high-water
	// mark when only reads moved it.
	clockEvery = 500 * time.Millisecond
	// catchUpBound bounds a new leader's catch-up before it reloads the
	// prefix instead.
	catchUpBound = 5 * time.Second
	// minBackoff and maxBackoff bound the pause between terms.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
	// maxSpaceBackoff bounds the pause between two recoveries from etcd's
	// NOSPACE alarm (the first at once, then after minBackoff doubling);
	// spaceBound bounds one recovery (a compaction and a defragmentation
	// of every member).
	maxSpaceBackoff = time.Minute
	spaceBound      = time.Minute
)

// clusterRecheck is how often a node checks that its endpoints are still
// one cluster's (a variable for tests).
var clusterRecheck = 10 * time.Second

// Config is how a state store process reaches etcd and serves.
type Config struct {
	// Endpoints are the etcd members' client addresses, host:port each
	// (ParseURL).
	Endpoints []string
	// TLS, when set, connects to etcd over TLS.
	TLS *tls.Config
	// Username and Password authenticate to etcd (none when empty).
	Username, Password string
	// Prefix is where the store lives in etcd (DefaultPrefix; a '/' is
	// added when it does not end with one); several stores can share one
	// etcd under different prefixes, none of which may start another (Open
	// refuses what it can detect with a *PrefixError, ErrPrefixOverlap; and
	// "/" alone). Each store needs its own MQTT broker: two leaders on one
	// broker would both answer every request.
	Prefix string
	// LeaseTTL is the election session's lease (DefaultLeaseTTL, whole
	// seconds): a leader that dies without resigning is replaced about
	// this long after.
	LeaseTTL time.Duration
	// DialTimeout bounds the first connection to etcd
	// (DefaultDialTimeout); TxnTimeout one transaction
	// (DefaultTxnTimeout).
	DialTimeout, TxnTimeout time.Duration
	// CompactEvery is how often the leader compacts etcd's history
	// (DefaultCompactEvery); negative: never.
	CompactEvery time.Duration
	// CompactBytes is how many bytes the leader writes between two
	// compactions driven by volume (DefaultCompactBytes); negative: never.
	// etcd's quota must exceed the store plus twice this (docs/ha.md).
	CompactBytes int64
	// Server are the options of the server the leader runs; Broker must be
	// set, DataDir must not. Replica is set by the node.
	Server server.Options
	// OnLeader, when set, is called with the server once it serves, and
	// with nil once it stopped (the node stepped down or ends).
	OnLeader func(*server.Server)
	// Logger gets the node's events (the server's Logger when nil).
	Logger *slog.Logger
}

// ParseURL splits etcd://HOST:PORT[,HOST:PORT...] into endpoints.
func ParseURL(s string) ([]string, error) {
	rest, ok := strings.CutPrefix(s, "etcd://")
	if !ok {
		return nil, fmt.Errorf("etcd store %q: want etcd://HOST:PORT[,HOST:PORT...]", s)
	}
	var eps []string
	for ep := range strings.SplitSeq(rest, ",") {
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" {
			return nil, fmt.Errorf("etcd store %q: endpoint %q: want HOST:PORT", s, ep)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("etcd store %q: endpoint %q: bad port", s, ep)
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// Node is one state store process on etcd: a standby until it wins the
// election, then the leader until it loses it, then a standby again.
type Node struct {
	cfg Config
	cli *clientv3.Client
	log *slog.Logger
	id  string

	// aborted (tests) makes the node end as a killed process would: no
	// resignation, no lease revoked.
	aborted atomic.Bool

	mu   sync.Mutex
	srv  *server.Server
	lead *Leader
}

// Open connects to etcd, failing within Config.DialTimeout when no
// member answers, and refuses a prefix that overlaps another store's
// (ErrPrefixOverlap).
func Open(cfg Config) (*Node, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcdstore: no endpoints")
	}
	if cfg.Server.Broker == "" {
		return nil, errors.New("etcdstore: the store on etcd needs a broker (external mode)")
	}
	if cfg.Server.DataDir != "" {
		return nil, errors.New("etcdstore: the store on etcd excludes a data directory")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if !strings.HasSuffix(cfg.Prefix, "/") {
		// "/a" would cover another store's "/ab".
		cfg.Prefix += "/"
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.TxnTimeout <= 0 {
		cfg.TxnTimeout = DefaultTxnTimeout
	}
	if cfg.CompactEvery == 0 {
		cfg.CompactEvery = DefaultCompactEvery
	}
	if cfg.CompactBytes == 0 {
		cfg.CompactBytes = DefaultCompactBytes
	}
	if lim := cfg.Server.Limits.MaxValueBytes; lim <= 0 || lim > MaxValueBytes {
		cfg.Server.Limits.MaxValueBytes = MaxValueBytes
	}
	if lim := cfg.Server.Limits.MaxKeyBytes; lim <= 0 || lim > MaxKeyBytes {
		cfg.Server.Limits.MaxKeyBytes = MaxKeyBytes
	}
	log := cfg.Logger
	if log == nil {
		log = cfg.Server.Logger
	}
	if log == nil {
		log = slog.Default()
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		// Explicit, though the client's defaults: every transaction is
		// cut below the send limit, every read is paged below the
		// receive limit.
		MaxCallSendMsgSize: ClientSendBytes,
		MaxCallRecvMsgSize: ClientRecvBytes,
		Logger:             zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd at %s unreachable: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	if _, err := cli.Get(ctx, cfg.Prefix+clockKey); err != nil {
		_ = cli.Close()
		if cause := dialCauses(cfg.Endpoints, cfg.TLS, min(cfg.DialTimeout, statusTimeout)); cause != "" {
			return nil, fmt.Errorf("etcd at %s unreachable: %w (%s)", strings.Join(cfg.Endpoints, ","), err, cause)
		}
		return nil, fmt.Errorf("etcd at %s unreachable: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	if err := checkCluster(ctx, cli, cfg.Endpoints); err != nil {
		_ = cli.Close()
		return nil, err
	}
	if err := checkPrefix(ctx, cli, cfg.Prefix); err != nil {
		_ = cli.Close()
		return nil, err
	}
	host, _ := os.Hostname()
	return &Node{cfg: cfg, cli: cli, log: log, id: fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())}, nil
}

// Server is the server while the node leads, else nil.
func (n *Node) Server() *server.Server {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.srv
}

func (n *Node) setServer(s *server.Server) {
	n.mu.Lock()
	n.srv = s
	n.mu.Unlock()
	if n.cfg.OnLeader != nil {
		n.cfg.OnLeader(s)
	}
}

// errFatal marks an error that ends Run instead of a new term.
type errFatal struct{ err error }

func (e errFatal) Error() string { return e.err.Error() }
func (e errFatal) Unwrap() error { return e.err }

// Run follows, campaigns and leads, term after term, until ctx ends (it
// then resigns, so a standby takes over at once) or the server cannot be
// built. It closes the etcd client when it returns.
func (n *Node) Run(ctx context.Context) error {
	defer n.cli.Close()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go n.recheckCluster(ctx, stop)
	ended := func() error {
		if err := context.Cause(ctx); errors.Is(err, ErrMixedClusters) {
			return err
		}
		return nil
	}
	backoff := minBackoff
	var space spaceRecovery
	for {
		began := time.Now()
		err := n.term(ctx)
		if ctx.Err() != nil {
			return ended()
		}
		var fatal errFatal
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if time.Since(began) > maxSpaceBackoff {
			space.reset()
		}
		if errors.Is(err, rpctypes.ErrNoSpace) {
			n.noSpace(ctx, &space, err)
		} else {
			space.reset()
			n.log.Warn("state store stepped down", "err", err)
		}
		// Not a busy loop while etcd or the broker is down: the pause
		// doubles while terms fail quickly, and starts over after a
		// long one.
		if time.Since(began) > maxBackoff {
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return ended()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// recheckCluster checks the endpoints' cluster ids again every
// clusterRecheck, in the background: a member unreachable at start may
// come up later as part of another cluster. It ends the node (stop) with
// ErrMixedClusters when they differ.
func (n *Node) recheckCluster(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(clusterRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := checkCluster(ctx, n.cli, n.cfg.Endpoints); errors.Is(err, ErrMixedClusters) {
			n.log.Error("etcd endpoints of different clusters; stopping", "err", err)
			stop(err)
			return
		}
	}
}

// term is one standby period and, when the election is won, one
// leadership.
func (n *Node) term(ctx context.Context) error {
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	f := newFollower(n.cli, n.cfg.Prefix, n.log)
	go f.run(fctx)
	// A session of its own context: a clean shutdown revokes its lease
	// after ctx ended.
	sess, err := concurrency.NewSession(n.cli, concurrency.WithTTL(int((n.cfg.LeaseTTL+time.Second-1)/time.Second)))
	if err != nil {
		return err
	}
	defer func() {
		if !n.aborted.Load() {
			_ = sess.Close()
		}
	}()
	n.log.Info("state store standby", "prefix", n.cfg.Prefix, "etcd", strings.Join(n.cfg.Endpoints, ","), "lease", n.cfg.LeaseTTL)
	el := concurrency.NewElection(sess, n.cfg.Prefix+leaderDir)
	cctx, stopCampaign := context.WithCancel(ctx)
	defer stopCampaign()
	go func() {
		select {
		case <-sess.Done(): // lease lost while waiting
			stopCampaign()
		case <-cctx.Done():
		}
	}()
	if err := el.Campaign(cctx, n.id); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	n.log.Debug("election won; catching up", "key", el.Key())
	// The standby stops following, then reads what its watch had not
	// applied yet.
	stopFollow()
	<-f.done
	cu, cancel := context.WithTimeout(ctx, catchUpBound)
	st, err := f.state(cu)
	if err == nil {
		err = catchUp(cu, n.cli, n.cfg.Prefix, st)
	}
	cancel()
	if err != nil && ctx.Err() == nil {
		n.log.Warn("standby could not catch up; reloading the store", "err", err)
		st, err = load(ctx, n.cli, n.cfg.Prefix)
	}
	if err != nil {
		resign(el)
		return err
	}
	lead := newLeader(n.cli, n.cfg.Prefix, el.Key(), el.Rev(), n.cfg.TxnTimeout, st, n.cfg.CompactBytes)
	opts := n.cfg.Server
	opts.Replica = lead
	srv, err := server.New(opts)
	if err != nil {
		n.log.Error("state store not built", "err", err)
		resign(el)
		if errors.Is(err, server.ErrInvalidOptions) {
			return errFatal{err}
		}
		return err
	}
	if err := srv.Start(); err != nil {
		_ = srv.Close()
		resign(el)
		return fmt.Errorf("start: %w", err)
	}
	// A change the last leader committed but died before notifying
	// reached its watchers as Start attached the server to the broker,
	// before it took any request (Options.Replica).
	n.log.Info("state store leader", "url", srv.URL(), "prefix", n.cfg.Prefix, "revision", st.rev, "keys", srv.Engine().Len())
	n.mu.Lock()
	n.lead = lead
	n.mu.Unlock()
	n.setServer(srv)
	mctx, stopMaint := context.WithCancel(ctx)
	go n.maintain(mctx, lead)
	var why error
	select {
	case <-ctx.Done():
	case <-sess.Done():
		why = errors.New("etcd session lost")
	case <-lead.Lost():
		why = lead.lostErr
	}
	stopMaint()
	if why != nil {
		// Stop taking changes: every later transaction fails at once.
		// Stop taking requests (another node may lead already), and
		// publish the answers of those in flight, the persistence error,
		// before leaving the broker (bounded: a transaction under way may
		// take up to TxnTimeout to fail).
		n.log.Warn("state store leadership lost; stopping", "err", why)
		lead.lose(why)
		sctx, cancel := context.WithTimeout(context.Background(), n.cfg.TxnTimeout+time.Second)
		if !srv.Drain(sctx) {
			n.log.Warn("state store answers not all published before stepping down")
		}
		cancel()
	}
	n.setServer(nil)
	_ = srv.Close()
	if why == nil && !n.aborted.Load() {
		resign(el)
	}
	return why
}

// resign hands the leadership over, bounded.
func resign(el *concurrency.Election) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = el.Resign(ctx)
}

// maintain writes the clock's high-water mark and compacts etcd's
// history while the node leads.
func (n *Node) maintain(ctx context.Context, lead *Leader) {
	clock := time.NewTicker(clockEvery)
	defer clock.Stop()
	var compact <-chan time.Time
	if n.cfg.CompactEvery > 0 {
		t := time.NewTicker(n.cfg.CompactEvery)
		defer t.Stop()
		compact = t.C
	}
	var seen int64 // the revision at the last compaction tick
	for {
		select {
		case <-ctx.Done():
			return
		case <-clock.C:
			if err := lead.tick(); err != nil {
				return
			}
		case <-lead.compactDueC():
			if rev := lead.takeCompaction(); rev > 0 {
				if err := lead.compact(rev); err != nil && !strings.Contains(err.Error(), "compacted") {
					n.log.Warn("etcd compaction failed", "revision", rev, "err", err)
				}
			}
		case <-compact:
			rctx, cancel := context.WithTimeout(ctx, n.cfg.TxnTimeout)
			resp, err := n.cli.Get(rctx, n.cfg.Prefix+clockKey)
			cancel()
			if err != nil {
				continue
			}
			if seen > 0 {
				if err := lead.compact(seen); err != nil && !strings.Contains(err.Error(), "compacted") {
					n.log.Warn("etcd compaction failed", "revision", seen, "err", err)
				}
			}
			seen = resp.Header.Revision
		}
	}
}
