package runtime_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server/servertest"
)

// coreClockAttacker is a bare paho client that builds state store requests
// by hand, with whatever __ts it likes: the attack of issue #12 comes from
// outside the runtime.
type coreClockAttacker struct {
	pc      *paho.Client
	id      string
	mu      sync.Mutex
	waiting map[string]chan *paho.Publish
}

func coreNewClockAttacker(t testing.TB, brokerURL, id string) *coreClockAttacker {
	t.Helper()
	a := &coreClockAttacker{id: id, waiting: make(map[string]chan *paho.Publish)}
	a.pc = coreRawClient(t, brokerURL, id, runtime.ResponseTopic(id), func(_ *paho.Client, p *paho.Publish) {
		if p.Properties == nil {
			return
		}
		a.mu.Lock()
		ch := a.waiting[string(p.Properties.CorrelationData)]
		delete(a.waiting, string(p.Properties.CorrelationData))
		a.mu.Unlock()
		if ch != nil {
			ch <- p
		}
	})
	return a
}

// request sends one request with the given __ts and returns the response
// payload and its __ts.
func (a *coreClockAttacker) request(ctx context.Context, ts string, args []string) (payload, version string, err error) {
	var corr [16]byte
	_, _ = rand.Read(corr[:])
	ch := make(chan *paho.Publish, 1)
	a.mu.Lock()
	a.waiting[string(corr[:])] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, string(corr[:]))
		a.mu.Unlock()
	}()
	bs := make([][]byte, len(args))
	for i, s := range args {
		bs[i] = []byte(s)
	}
	_, err = a.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: runtime.RequestTopic, Payload: resp3.AppendCommand(nil, bs...),
		Properties: &paho.PublishProperties{
			CorrelationData: corr[:], ResponseTopic: runtime.ResponseTopic(a.id),
			User: []paho.UserProperty{
				{Key: "__srcId", Value: a.id}, {Key: "__ts", Value: ts}, {Key: "__protVer", Value: "1.0"},
				{Key: "$partition", Value: a.id}, {Key: "$high_priority", Value: ""},
			},
		}})
	if err != nil {
		return "", "", err
	}
	select {
	case p := <-ch:
		v, _ := coreUser(p, "__ts")
		return string(p.Payload), v, nil
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
}

// attackTS is the __ts of the attack: aheadMs past the attacker's clock,
// with the given counter.
func attackTS(aheadMs int64, counter uint64) string {
	return strconv.FormatInt(time.Now().UnixMilli()+aheadMs, 10) + ":" + strconv.FormatUint(counter, 10) + ":attacker"
}

// attackStep is the i-th request of the attack loop: GETs with __ts now +
// 59,999 ms and now + 60,000 ms (the latter reliably pushed the old
// server's clock past one minute: 204 of 300 SETs failed), both with
// counter 2^64-1, and a write 54 s ahead with the largest accepted
// counter.
func attackStep(i int) (string, []string) {
	switch i % 3 {
	case 0:
		return attackTS(59_999, math.MaxUint64), []string{"GET", "k"}
	case 1:
		return attackTS(60_000, math.MaxUint64), []string{"GET", "k"}
	}
	return attackTS(54_000, math.MaxUint64>>1), []string{"SET", "attacked", "x"}
}

const tooFarAhead = "-ERR the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n"

// The attack of issue #12 against the embedded server: one connection
// sends GETs with __ts = now + 59,999 ms and counter 2^64-1 (refused) and
// writes with a __ts just inside the accept window and a huge counter
// (accepted), while a runtime client with the default one-minute drift
// sets keys. Every SET succeeds, and the attacker never gets a version
// past what that client accepts.
func TestClockAttackLeavesWritersAlone(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	a := coreNewClockAttacker(t, srv.URL(), "attacker")

	// The exact attack is refused, every time.
	for range 50 {
		p, v, err := a.request(ctx, attackTS(59_999, math.MaxUint64), []string{"GET", "k"})
		if err != nil {
			t.Fatal(err)
		}
		if p != tooFarAhead || v != "" {
			t.Fatalf("GET with __ts now+59999ms counter 2^64-1 answered %q (__ts %q), want the drift error", p, v)
		}
	}

	// Meanwhile the GET attack, and writes 54 s ahead (inside the 55 s
	// window, leaving room for the attacker's and the server's clocks to
	// differ by a second) with a huge counter, keep coming while the
	// runtime client writes.
	actx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var attackErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3000 && actx.Err() == nil; i++ {
			write := i%3 == 2
			ts, args := attackStep(i)
			p, v, err := a.request(actx, ts, args)
			switch {
			case actx.Err() != nil:
				return
			case err != nil:
				attackErr = err
				return
			case !write && p != tooFarAhead:
				attackErr = fmt.Errorf("attack GET answered %q", p)
				return
			case write && p != "+OK\r\n":
				attackErr = fmt.Errorf("attack SET 54 s ahead answered %q", p)
				return
			}
			if v != "" {
				if ahead := coreAheadMs(v); ahead > 55_000+200 {
					attackErr = fmt.Errorf("attacker got version %s, %d ms ahead", v, ahead)
					return
				}
			}
		}
	}()
	const n = 300
	failed := 0
	for i := range n {
		if _, err := c.Set(ctx, []byte("k"), []byte(strconv.Itoa(i)), runtime.SetOptions{}); err != nil {
			failed++
			t.Errorf("SET %d under attack: %v", i, err)
			if failed > 5 {
				break
			}
		}
	}
	if _, _, err := c.Get(ctx, []byte("k")); err != nil {
		t.Errorf("GET under attack: %v", err)
	}
	stop()
	wg.Wait()
	if attackErr != nil {
		t.Fatal(attackErr)
	}
	if s := c.Stats(); s.Errors != 0 {
		t.Fatalf("Stats().Errors = %d under attack", s.Errors)
	}
}

// coreAheadMs is how far the HLC text v is ahead of the local clock.
func coreAheadMs(v string) int64 {
	wall, _, _ := strings.Cut(v, ":")
	ms, _ := strconv.ParseInt(wall, 10, 64)
	return ms - time.Now().UnixMilli()
}

// BenchmarkClockAttack measures a well-behaved client's GET latency and
// SET outcomes with and without the attack of issue #12 running from
// another connection (the loop of attackStep). It reports the GET p99 and the
// share of SETs that failed. Run with -bench ClockAttack -benchtime 2000x.
func BenchmarkClockAttack(b *testing.B) {
	for _, attack := range []bool{false, true} {
		name := "quiet"
		if attack {
			name = "attack"
		}
		b.Run(name, func(b *testing.B) {
			srv := servertest.New(b)
			c := dial(b, srv.URL())
			ctx := testCtx(b)
			actx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			var attacks int
			if attack {
				a := coreNewClockAttacker(b, srv.URL(), "attacker")
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 1_000_000 && actx.Err() == nil; i++ {
						ts, args := attackStep(i)
						if _, _, err := a.request(actx, ts, args); err != nil {
							return
						}
						attacks++
					}
				}()
			}
			lat := make([]time.Duration, 0, b.N)
			var setFailed int
			b.ResetTimer()
			for i := range b.N {
				if _, err := c.Set(ctx, []byte("k"), []byte(strconv.Itoa(i)), runtime.SetOptions{}); err != nil {
					setFailed++
				}
				t0 := time.Now()
				if _, _, err := c.Get(ctx, []byte("k")); err != nil && !errors.Is(err, runtime.ErrNotFound) {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			stop()
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "get-p99-µs")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "get-p50-µs")
			b.ReportMetric(float64(setFailed), "sets-failed")
			b.ReportMetric(float64(b.N), "sets")
			b.ReportMetric(float64(attacks), "attack-requests")
		})
	}
}
