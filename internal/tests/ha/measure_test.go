package ha

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/bench"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
)

var (
	measure     = flag.Bool("ha.measure", false, "run TestHAMeasure: failover times and kept SETs on etcd against a data dir (by hand; prints figures)")
	kills       = flag.Int("ha.kills", 20, "TestHAMeasure: leader kills timed")
	benchRounds = flag.Int("ha.benchrounds", 3, "TestHAMeasure: alternated pairs of bench runs, etcd then data dir")
	benchSETs   = flag.Int("ha.sets", 20000, "TestHAMeasure: kept SETs per bench run (4 clients × 16 in flight)")
)

// TestHAMeasure measures, by hand (-ha.measure -v), what docs/ha.md
// reports: the time from the leader's SIGKILL to the first answer from the
// new leader, over -ha.kills kills, and ssgen bench's 4 × 16 kept SETs
// against `ssgen serve --store etcd` and `ssgen serve --data-dir`, each
// attached to its own mosquitto, in alternated runs. It asserts nothing
// about the figures.
func TestHAMeasure(t *testing.T) {
	if !*measure {
		t.Skip("a measurement run by hand: -ha.measure")
	}
	etcd := etcdtest.Start(t, 3)
	broker := brokertest.Start(t)
	cl := &cluster{t: t}
	for i := range *procsN {
		p := newServeProc(t, fmt.Sprintf("serve%d", i), "--broker", broker.URL(), "--store", etcd.URL(), "--log-level", "info")
		cl.procs = append(cl.procs, p)
		p.start()
		if i == 0 {
			waitRole(t, p, "leader")
		} else {
			waitRole(t, p, "standby")
		}
	}
	failover(t, cl, broker.Addr())

	// The data-dir store on a broker of its own (two stores on one broker
	// would both answer).
	broker2 := brokertest.Start(t)
	local := newServeProc(t, "serve-datadir", "--broker", broker2.URL(), "--data-dir", t.TempDir(), "--log-level", "warn")
	local.start()
	probe := dial(t, broker2.Addr(), "ha-probe-datadir", 5*time.Second)
	if err := retriedSet(probe, "ha/ready"); err != nil {
		t.Fatalf("data-dir store: %v", err)
	}
	bin := ssgenBinary(t)
	for r := range *benchRounds {
		e := runBench(t, bin, broker.URL())
		d := runBench(t, bin, broker2.URL())
		ms := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
		t.Logf("bench round %d: etcd %.0f SET/s p50 %v p99 %v (%d errors); data dir %.0f SET/s p50 %v p99 %v (%d errors); etcd/data dir %.2f×; load average %s",
			r, e.OpsPerSec, ms(e.All.P50), ms(e.All.P99), e.Errors, d.OpsPerSec, ms(d.All.P50), ms(d.All.P99), d.Errors, e.OpsPerSec/d.OpsPerSec, loadAvg())
	}
}

// retriedSet sets key, trying up to ten times (each bounded by the
// client's timeout).
func retriedSet(cl *runtime.Client, key string) error {
	var err error
	for range 10 {
		if _, err = cl.Set(context.Background(), []byte(key), []byte("x"), runtime.SetOptions{Persist: true}); err == nil {
			return nil
		}
	}
	return err
}

// failover kills the leader -ha.kills times and logs how long the store
// gave no answer: from the kill to the first answer to a SET sent after
// it, which only the new leader can give.
func failover(t *testing.T, cl *cluster, brokerAddr string) {
	probe := dial(t, brokerAddr, "ha-probe", 500*time.Millisecond)
	var took, elected []time.Duration
	for k := range *kills {
		// The store answers before the kill.
		if err := retriedSet(probe, "ha/failover"); err != nil {
			t.Fatalf("kill %d: the store does not answer before the kill: %v", k, err)
		}
		old := cl.leader()
		killed := time.Now()
		old.kill()
		var answered time.Time
		testwait.Until(t, bound, fmt.Sprintf("kill %d: an answer from the new leader", k), func() bool {
			_, err := probe.Set(context.Background(), []byte("ha/failover"), []byte("x"), runtime.SetOptions{Persist: true})
			if err == nil {
				answered = time.Now()
			}
			return err == nil
		})
		lead := cl.leader()
		lead.mu.Lock()
		at := lead.leadAt
		lead.mu.Unlock()
		took = append(took, answered.Sub(killed))
		elected = append(elected, at.Sub(killed))
		t.Logf("kill %d: %s killed, %s answered after %v (logged leadership after %v)", k, old.name, lead.name, answered.Sub(killed).Round(time.Millisecond), at.Sub(killed).Round(time.Millisecond))
		old.start()
		waitRole(t, old, "standby")
	}
	p50, mx := quantiles(took)
	e50, emx := quantiles(elected)
	t.Logf("failover over %d kills: first answer p50 %v, max %v; leadership logged p50 %v, max %v; load average %s", len(took), p50, mx, e50, emx, loadAvg())
}

func quantiles(ds []time.Duration) (p50, max time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond)
}

// runBench runs ssgen bench against the store on brokerURL.
func runBench(t *testing.T, bin, brokerURL string) bench.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "bench", "--broker", brokerURL, "--persist", "--mix", "get=0,set=100",
		"--clients", "4", "--in-flight", "16", "--requests", fmt.Sprint(*benchSETs), "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ssgen bench --broker %s: %v\n%s", brokerURL, err, errb.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("ssgen bench --json: %v\n%s", err, out.String())
	}
	return rep
}

// loadAvg is the machine's 1-, 5- and 15-minute load averages, for the
// record (the figures move with them).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
