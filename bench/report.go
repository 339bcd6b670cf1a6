package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is the outcome of one run. Durations marshal as nanoseconds.
type Report struct {
	Mode      string        `json:"mode"`   // "requests" or "watch"
	Target    string        `json:"target"` // "embedded", "external" or "external, attached in process"
	URL       string        `json:"url"`    // the broker the clients talked to
	Clients   int           `json:"clients"`
	InFlight  int           `json:"in_flight"`
	Mix       string        `json:"mix,omitempty"`
	ValueSize int           `json:"value_size"`
	Keys      int           `json:"keys"`
	Requests  int           `json:"requests_bound,omitempty"`
	Duration  time.Duration `json:"duration_bound_ns,omitempty"`
	Segments  int           `json:"segments"`           // interleaved segments of ssgen and baselines
	Persist   bool          `json:"persist,omitempty"`  // SETs asked for persistence
	DataDir   string        `json:"data_dir,omitempty"` // the embedded target's data directory
	Machine   Machine       `json:"machine"`

	Elapsed   time.Duration `json:"elapsed_ns"`
	Ops       int           `json:"ops"`    // operations completed (errors included)
	Errors    int           `json:"errors"` // of Ops, failed (a GET miss is no error)
	OpsPerSec float64       `json:"ops_per_sec"`
	// CPUPerOp is the CPU time this process spent per operation (client,
	// and an embedded or attached server; not a broker or service in
	// another process); 0 where it cannot be read.
	CPUPerOp time.Duration `json:"cpu_per_op_ns"`
	PerOp    []OpResult    `json:"per_op"`
	All      Latency       `json:"all"`
	// FirstError is the text of the first failure, to tell why Errors > 0.
	FirstError string `json:"first_error,omitempty"`

	// Commits describes the embedded target's group commits during the
	// run (Persist only; warm-up included).
	Commits *CommitResult `json:"commits,omitempty"`

	Watch     *WatchResult   `json:"watch,omitempty"`
	Baselines []Baseline     `json:"baselines,omitempty"`
	Console   *ConsoleResult `json:"console,omitempty"`
}

// OpResult is the share of one operation.
type OpResult struct {
	Op        string  `json:"op"`
	Count     int     `json:"count"`
	Errors    int     `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	Latency   Latency `json:"latency"`
}

// CommitResult is what the embedded target's data file saw: transactions,
// the writes they held, and their durations (fsyncs included).
type CommitResult struct {
	Commits         int64         `json:"commits"`
	Failures        int64         `json:"failures"`
	Writes          int64         `json:"writes"`
	WritesPerCommit float64       `json:"writes_per_commit"`
	MeanCommit      time.Duration `json:"mean_commit_ns"`
	MaxCommit       time.Duration `json:"max_commit_ns"`
}

// WatchResult is the notification side of a watch-mode run: Rounds SETs,
// each expected to reach every one of Watchers.
type WatchResult struct {
	Watchers     int     `json:"watchers"`
	WatchClients int     `json:"watch_clients"`
	Rounds       int     `json:"rounds"`
	Expected     int     `json:"expected"`   // Rounds × Watchers
	Notified     int     `json:"notified"`   // notifications of those rounds received in time
	Missed       int     `json:"missed"`     // Expected - Notified
	Duplicates   int     `json:"duplicates"` // a watcher got the same round twice
	Resyncs      int     `json:"resyncs"`    // Resync events (a watcher fell behind or reconnected)
	Latency      Latency `json:"latency"`    // from the start of the SET to each watcher's event
}

// Baseline is a raw MQTT 5 QoS 1 request/response echo run with the same
// clients × in flight and bound. Ratio is the ssgen ops/s divided by the
// baseline's; CPURatio is ssgen's CPU time per operation divided by the
// baseline's (0 where unknown).
type Baseline struct {
	Name       string        `json:"name"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Ops        int           `json:"ops"`
	Errors     int           `json:"errors"`
	OpsPerSec  float64       `json:"ops_per_sec"`
	CPUPerOp   time.Duration `json:"cpu_per_op_ns"`
	Latency    Latency       `json:"latency"`
	Ratio      float64       `json:"ratio"`
	CPURatio   float64       `json:"cpu_ratio"`
	FirstError string        `json:"first_error,omitempty"`
}

// WriteJSON writes r as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as a table for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if wr := r.Watch; wr != nil {
		fmt.Fprintf(&b, "target %s (%s), watch mode: %d watcher(s) of one key over %d client(s), value %d B",
			r.Target, r.URL, wr.Watchers, wr.WatchClients, r.ValueSize)
	} else {
		fmt.Fprintf(&b, "target %s (%s), %d client(s) × %d in flight, value %d B, %d keys, mix %s",
			r.Target, r.URL, r.Clients, r.InFlight, r.ValueSize, r.Keys, r.Mix)
	}
	if r.Persist {
		b.WriteString("\nSETs ask for persistence (aio-persistence=true)")
		if r.DataDir != "" {
			fmt.Fprintf(&b, "; embedded data dir %s", r.DataDir)
		}
	}
	fmt.Fprintf(&b, "\nmachine %d CPU, GOMAXPROCS %d, load average %s, %s\n",
		r.Machine.NumCPU, r.Machine.GOMAXPROCS, orDash(r.Machine.LoadAvg), r.Machine.GoVersion)
	fmt.Fprintf(&b, "elapsed %s, %d ops, %d errors", r.Elapsed.Round(time.Millisecond), r.Ops, r.Errors)
	if r.Segments > 1 && len(r.Baselines) > 0 {
		fmt.Fprintf(&b, ", ssgen and baselines interleaved in %d segments", r.Segments)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-36s %9s %7s %10s %9s %9s %9s %9s %9s\n", "", "count", "errors", "ops/s", "cpu/op", "p50", "p90", "p99", "max")
	row := func(name string, count, errs int, rate float64, cpu time.Duration, l Latency) {
		rs, cs := "-", "-"
		if rate > 0 {
			rs = fmt.Sprintf("%.0f", rate)
		}
		if cpu > 0 {
			cs = fmt.Sprintf("%.1fµs", float64(cpu)/1e3)
		}
		fmt.Fprintf(&b, "%-36s %9d %7d %10s %9s %9s %9s %9s %9s\n", name, count, errs, rs, cs, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max))
	}
	for _, o := range r.PerOp {
		cpu := time.Duration(0)
		if len(r.PerOp) == 1 {
			cpu = r.CPUPerOp
		}
		row(o.Op, o.Count, o.Errors, o.OpsPerSec, cpu, o.Latency)
	}
	if len(r.PerOp) > 1 {
		row("all", r.Ops, r.Errors, r.OpsPerSec, r.CPUPerOp, r.All)
	}
	if wr := r.Watch; wr != nil {
		row("notify", wr.Notified, wr.Missed, 0, 0, wr.Latency)
	}
	for _, bl := range r.Baselines {
		row("baseline "+bl.Name, bl.Ops, bl.Errors, bl.OpsPerSec, bl.CPUPerOp, bl.Latency)
	}
	if c := r.Commits; c != nil {
		fmt.Fprintf(&b, "\ndata file: %d transactions (%d failed), %d writes, %.1f writes per transaction, commit mean %s, max %s\n",
			c.Commits, c.Failures, c.Writes, c.WritesPerCommit, ms(c.MeanCommit), ms(c.MaxCommit))
	}
	if c := r.Console; c != nil {
		for _, bl := range []Baseline{c.WithStream, c.NoConsole} {
			row(bl.Name, bl.Ops, bl.Errors, bl.OpsPerSec, bl.CPUPerOp, bl.Latency)
		}
	}
	if wr := r.Watch; wr != nil {
		fmt.Fprintf(&b, "\nwatch: %d watchers over %d clients, %d rounds: %d of %d notifications in time, %d missed, %d duplicates, %d resyncs\n",
			wr.Watchers, wr.WatchClients, wr.Rounds, wr.Notified, wr.Expected, wr.Missed, wr.Duplicates, wr.Resyncs)
	}
	if len(r.Baselines) > 0 {
		b.WriteString("\n")
		for _, bl := range r.Baselines {
			fmt.Fprintf(&b, "ssgen / %s: %.2f× ops/s", bl.Name, bl.Ratio)
			if bl.CPURatio > 0 {
				fmt.Fprintf(&b, ", %.2f× CPU per op", bl.CPURatio)
			}
			b.WriteString("\n")
		}
	}
	if c := r.Console; c != nil {
		fmt.Fprintf(&b, "\nconsole at %s: one live stream open: %.3f× the ops/s with none open (p99 %s vs %s); console serving, no stream: %.3f× the ops/s of a server without one\n",
			c.URL, c.StreamRatio, ms(c.WithStream.Latency.P99), ms(r.All.P99), c.HooksRatio)
		fmt.Fprintf(&b, "the stream received %d records (%d KiB) and was told of %d it skipped\n", c.StreamRecords, c.StreamBytes>>10, c.StreamLost)
	}
	if r.FirstError != "" {
		fmt.Fprintf(&b, "\nfirst error: %s\n", r.FirstError)
	}
	for _, bl := range r.Baselines {
		if bl.FirstError != "" {
			fmt.Fprintf(&b, "first error of baseline %s: %s\n", bl.Name, bl.FirstError)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e6) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
