package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ssgen/ssgen/server"
)

// ErrInvalidConfig wraps every problem found in a Config or a mix spec.
var ErrInvalidConfig = errors.New("bench: invalid configuration")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
}

// Op is one state store operation the load generator issues.
type Op int

// The operations, in report order.
const (
	OpGet Op = iota
	OpSet
	OpDel
	numOps
)

var opNames = [numOps]string{"get", "set", "del"}

func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Mix is the relative weight of each operation.
type Mix [numOps]int

// ParseMix reads "get=50,set=50,del=0". Operations left out weigh 0; at
// least one weight must be positive.
func ParseMix(s string) (Mix, error) {
	var m Mix
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return m, invalid("mix %q: want op=weight", part)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		op := -1
		for i, n := range opNames {
			if n == name {
				op = i
			}
		}
		if op < 0 {
			return m, invalid("mix: unknown operation %q (want get, set or del)", name)
		}
		if seen[name] {
			return m, invalid("mix: %s given twice", name)
		}
		seen[name] = true
		w, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || w < 0 {
			return m, invalid("mix: weight of %s must be a non-negative integer, got %q", name, val)
		}
		m[op] = w
	}
	if m.total() == 0 {
		return m, invalid("mix %q: no operation has a positive weight", s)
	}
	return m, nil
}

func (m Mix) total() int { return m[OpGet] + m[OpSet] + m[OpDel] }

// String is the canonical spelling, as ParseMix reads it.
func (m Mix) String() string {
	return fmt.Sprintf("get=%d,set=%d,del=%d", m[OpGet], m[OpSet], m[OpDel])
}

// pick maps r in [0, total) to an operation.
func (m Mix) pick(r int) Op {
	for op := Op(0); op < numOps; op++ {
		if r < m[op] {
			return op
		}
		r -= m[op]
	}
	return OpGet
}

// Config describes one run. Zero fields take the defaults of Defaults.
type Config struct {
	// Broker is the MQTT broker a state store already serves on (a running
	// "ssgen serve", or a broker with a state store attached). Empty starts
	// an embedded server in this process.
	Broker string
	// Attach starts a state store in this process attached to Broker in
	// external mode (for a broker that has none; it also puts the service
	// inside a --cpuprofile).
	Attach bool
	// Persist makes every SET ask for persistence (aio-persistence=true).
	// An embedded target then gets a data directory (DataDir), its keys
	// are seeded as kept keys, and in requests mode the same workload also
	// runs against a second embedded server that keeps nothing, in turn
	// with it, as the baseline BaselineInMemory: the ratio is what
	// durability costs on this machine's disk.
	Persist bool
	// DataDir is the embedded target's data directory with Persist; empty
	// means a new temporary directory (os.MkdirTemp), removed at the end.
	// Benchmark the disk you mean to serve from: a temporary directory on
	// tmpfs fsyncs nothing.
	DataDir string
	// DirectCommits makes the embedded target commit each group straight
	// into its data file (server.Options.DirectCommits).
	DirectCommits bool
	// Clients is the number of client connections, InFlight the requests
	// each keeps in flight (one worker goroutine per request).
	Clients, InFlight int
	Mix               Mix
	ValueSize         int // bytes of every SET value (and of seeded values)
	Keys              int // size of the key space
	// Requests bounds the run in count (all workers together; watch mode:
	// SET rounds), Duration in time; the run ends at whichever comes
	// first. Neither set means Defaults().Requests.
	Requests int
	Duration time.Duration
	// Warmup requests per worker, not recorded, before the clock starts
	// (0: none).
	Warmup int
	// Watchers > 0 switches to watch mode: that many watchers of one key
	// over WatchClients client connections.
	Watchers, WatchClients int
	// Baseline also runs the raw MQTT echo through the same broker with
	// the same clients × in flight and bound; for an embedded server it
	// additionally runs an echo answered inside a mochi broker.
	Baseline bool
	// BareBaseline makes the echo's packets carry only a response topic
	// and correlation data, instead of the protocol envelope's properties
	// (see echoShape).
	BareBaseline bool
	// Segments splits the bound of the requests mode into that many
	// segments; the ssgen workload and each baseline run one segment each
	// in turn, so that a change in the machine's load hits them alike.
	Segments int
	// Timeout bounds each request, and in watch mode the wait for a
	// round's notifications.
	Timeout time.Duration
	// Console serves the embedded server's web console and measures what
	// it costs the request path: the run's segments alternate between no
	// live stream open, one stream open as a browser keeps it, and a
	// second embedded server without a console (see ConsoleResult). It
	// needs the embedded server and requests mode.
	Console bool
	// ConsoleClient, when set with Console, opens the live view instead
	// of the built-in stream client (a real browser, in the console's
	// browser tests): called before each segment that has it open with the
	// console's URL, it returns what closes it.
	ConsoleClient func(ctx context.Context, url string) (detach func())
	// Server, when set, changes the embedded target's options before it
	// starts (ssgen bench --schema FILE --enforce MODE sets its write
	// check); only the target, not the baselines' servers.
	Server func(*server.Options)
}

// Defaults are the values zero Config fields take.
func Defaults() Config {
	return Config{
		Clients: 1, InFlight: 1,
		Mix:       Mix{OpGet: 50, OpSet: 50},
		ValueSize: 40, Keys: 1000,
		Requests:     10000,
		WatchClients: 1, Segments: 1,
		Timeout: 10 * time.Second,
	}
}

func (c Config) withDefaults() (Config, error) {
	d := Defaults()
	if c.Clients < 0 || c.InFlight < 0 || c.ValueSize < 0 || c.Keys < 0 || c.Requests < 0 ||
		c.Duration < 0 || c.Warmup < 0 || c.Watchers < 0 || c.WatchClients < 0 || c.Segments < 0 || c.Timeout < 0 {
		return c, invalid("negative value")
	}
	if c.Attach && c.Broker == "" {
		return c, invalid("Attach needs a Broker")
	}
	if c.DataDir != "" && (!c.Persist || c.Broker != "") {
		return c, invalid("DataDir needs Persist and an embedded target (a running server has its own)")
	}
	if c.Console && (c.Broker != "" || c.Watchers > 0) {
		return c, invalid("Console needs the embedded server and requests mode")
	}
	if c.Clients == 0 {
		c.Clients = d.Clients
	}
	if c.InFlight == 0 {
		c.InFlight = d.InFlight
	}
	if c.Mix.total() == 0 {
		c.Mix = d.Mix
	}
	if c.ValueSize == 0 {
		c.ValueSize = d.ValueSize
	}
	if c.Keys == 0 {
		c.Keys = d.Keys
	}
	if c.Requests == 0 && c.Duration == 0 {
		c.Requests = d.Requests
	}
	if c.Segments == 0 {
		c.Segments = d.Segments
	}
	if c.Requests > 0 && c.Segments > c.Requests {
		c.Segments = c.Requests // every segment needs a request of its own
	}
	if c.WatchClients == 0 {
		c.WatchClients = d.WatchClients
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.Watchers > 0 {
		if c.WatchClients > c.Watchers {
			return c, invalid("%d watch clients for %d watchers: want at most one client per watcher", c.WatchClients, c.Watchers)
		}
		if c.ValueSize < seqBytes {
			c.ValueSize = seqBytes // the round number travels in the value
		}
	}
	return c, nil
}
