package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestVolumeAsksForCompactionEveryThreshold(t *testing.T) {
	type write struct {
		n   int
		rev int64
		at  int64 // 0: no compaction asked
	}
	for _, tc := range []struct {
		name   string
		every  int64
		mark   int64
		writes []write
	}{
		{"never when disabled", -1, 5, []write{{1 << 30, 6, 0}, {1 << 30, 7, 0}}},
		{"below the threshold", 100, 5, []write{{40, 6, 0}, {59, 7, 0}}},
		{"at the term's start revision first", 100, 5, []write{{60, 6, 0}, {40, 7, 5}}},
		{"then at the previous threshold's", 100, 5, []write{{100, 6, 5}, {30, 7, 0}, {70, 8, 6}, {200, 9, 8}}},
		{"not before a first revision", 100, 0, []write{{100, 6, 0}, {100, 7, 6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := volume{every: tc.every, mark: tc.mark}
			for i, w := range tc.writes {
				at, ok := v.add(w.n, w.rev)
				if want := w.at > 0; ok != want || (ok && at != w.at) {
					t.Fatalf("write %d (%d bytes at %d): compact at %d %v, want %d %v", i, w.n, w.rev, at, ok, w.at, want)
				}
			}
		})
	}
}

// The leader asks for a compaction once CompactBytes were written, at the
// revision its term began, through its transactions' bytes.
func TestLeaderAsksForCompactionByVolume(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) {
		cfg.CompactEvery = -1
		cfg.CompactBytes = 1 << 20
	})
	a.waitLeader(t)
	cli := dialEtcd(t, c)
	cl := clienttest.Dial(t, b.URL())
	ctx := clienttest.Context(t)
	value := bytes.Repeat([]byte("v"), 300<<10)
	// Four writes of 300 KiB pass 1 MiB once: the history before the
	// term is compacted, the revisions written since are kept.
	var first int64
	for i := range 4 {
		if _, err := cl.Set(ctx, []byte("k"), value, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			resp, err := cli.Get(ctx, DefaultPrefix+keysDir+"k")
			if err != nil {
				t.Fatal(err)
			}
			first = resp.Kvs[0].ModRevision
		}
	}
	testwait.Until(t, bound, "the history before the term compacted", func() bool {
		_, err := cli.Get(ctx, DefaultPrefix+keysDir+"k", clientv3.WithRev(1))
		return err != nil && strings.Contains(err.Error(), "compacted")
	})
	if _, err := cli.Get(ctx, DefaultPrefix+keysDir+"k", clientv3.WithRev(first)); err != nil {
		t.Fatalf("revision %d, written after the term began, compacted too: %v", first, err)
	}
}

// logCounter counts the log lines that contain a text, besides writing
// them to the test's log.
type logCounter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	out io.Writer
}

func (l *logCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	return l.out.Write(p)
}

func (l *logCounter) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// countLines counts the lines that contain every one of texts.
func (l *logCounter) countLines(texts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for line := range strings.SplitSeq(l.buf.String(), "\n") {
		all := true
		for _, s := range texts {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// rewrite sets key n times, each with a different value of size bytes,
// and returns how many writes succeeded and how many got the persistence
// failure; any other error fails the test unless others allows it.
func rewrite(t *testing.T, cl *runtime.Client, key string, n, size int, others ...error) (ok, failed int) {
	t.Helper()
	ctx := clienttest.Context(t)
	for i := range n {
		value := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		copy(value, fmt.Sprintf("%d:", i))
		_, err := cl.Set(ctx, []byte(key), value, runtime.SetOptions{})
		switch {
		case err == nil:
			ok++
		case errors.Is(err, runtime.ErrPersistence):
			failed++
		default:
			allowed := false
			for _, o := range others {
				allowed = allowed || errors.Is(err, o)
			}
			if !allowed {
				t.Fatalf("write %d: %v, want success or the persistence failure", i, err)
			}
		}
	}
	return ok, failed
}

// answers waits until the store takes a write and reads it back.
func answers(t *testing.T, url string) {
	t.Helper()
	cl := clienttest.Dial(t, url)
	testwait.Until(t, 2*bound, "the store answering a write and a read", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := cl.Set(ctx, []byte("after"), []byte("churn"), runtime.SetOptions{}); err != nil {
			return false
		}
		got, _, err := cl.Get(ctx, []byte("after"))
		return err == nil && string(got) == "churn"
	})
}

// noAlarms fails unless etcd has no alarm raised.
func noAlarms(t *testing.T, c *etcdtest.Cluster) {
	t.Helper()
	resp, err := dialEtcd(t, c).AlarmList(clienttest.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Alarms) > 0 {
		t.Fatalf("etcd alarms raised: %v", resp.Alarms)
	}
}

// The attack of the review: etcd with a 32 MiB quota, two instances with
// the default settings, one key rewritten 60 times with a different
// 900 KB value. etcd kept every revision until the minute's compaction,
// so write 37 hit the quota (NOSPACE), after which etcd refused every
// write, the election's lease too: no instance could lead, and none
// compact, for ever. The compaction driven by volume keeps the history
// within 2 × 8 MiB: every write succeeds, and no alarm is raised.
func TestRewritesOfALargeValueStayWithinEtcdsQuota(t *testing.T) {
	c := etcdtest.StartWith(t, 1, etcdtest.Options{QuotaBackendBytes: 32 << 20})
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a")
	a.waitLeader(t)
	startNode(t, c, b.URL(), "s")
	cl := clienttest.Dial(t, b.URL())
	ok, failed := rewrite(t, cl, "big", 60, 900_000)
	if ok != 60 {
		t.Fatalf("%d writes succeeded and %d failed, want all 60 to succeed", ok, failed)
	}
	noAlarms(t, c)
	answers(t, b.URL())
}

// When etcd's quota is reached anyway (here with compaction disabled, on
// three members of 16 MiB each), the store recovers by itself: the node that meets NOSPACE compacts,
// defragments and disarms, logging one error per episode rather than a
// warning every 2 s, and once the churn stops the store answers again
// without an operator.
func TestStoreRecoversFromEtcdsNoSpaceAlarm(t *testing.T) {
	c := etcdtest.StartWith(t, 3, etcdtest.Options{QuotaBackendBytes: 16 << 20})
	b := brokertest.Start(t)
	logs := map[string]*logCounter{}
	for _, name := range []string{"a", "s"} {
		lc := &logCounter{out: servertest.LogWriter(t)}
		logs[name] = lc
		r := startNode(t, c, b.URL(), name, func(cfg *Config) {
			cfg.CompactEvery = -1
			cfg.CompactBytes = -1
			cfg.Logger = slog.New(slog.NewTextHandler(lc, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", name)
		})
		if name == "a" {
			r.waitLeader(t)
		}
	}
	cl := clienttest.Dial(t, b.URL())
	// Without compaction 16 MiB hold fewer than 18 writes of 900 KB: 40
	// reach the quota, more than once. Requests that arrive while no
	// instance leads go unanswered (the runtime's timeout).
	ok, failed := rewrite(t, cl, "big", 40, 900_000, runtime.ErrTimeout, runtime.ErrNoService)
	t.Logf("%d writes succeeded, %d got the persistence failure", ok, failed)
	if failed == 0 {
		t.Fatal("no write failed: the quota was never reached")
	}
	answers(t, b.URL())
	noAlarms(t, c)
	for name, lc := range logs {
		errs := lc.count(`msg="etcd database space exceeded`)
		recovered := lc.count(`msg="etcd space recovered`)
		t.Logf("node %s: %d NOSPACE errors logged, %d recoveries", name, errs, recovered)
		if errs > recovered+1 {
			t.Errorf("node %s logged %d NOSPACE errors for %d recoveries: want one per episode", name, errs, recovered)
		}
		if n := lc.countLines("level=WARN", `msg="state store stepped down"`, "database space exceeded"); n > 0 {
			t.Errorf("node %s warned %d times of stepping down on NOSPACE besides the error", name, n)
		}
	}
}
