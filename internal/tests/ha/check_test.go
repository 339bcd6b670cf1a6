package ha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// watchBound is how long the check waits for the notifications of the
// round's acknowledged SETs (they take milliseconds; the bound is for a
// loaded machine).
const watchBound = 20 * time.Second

// retried runs op until it succeeds, fails for good, or failed five times
// for want of an answer (each try is bounded by the client's timeout).
func retried(op func() error) error {
	var err error
	for range 5 {
		if err = op(); err == nil || !runtime.IsRetryable(err) {
			return err
		}
	}
	return err
}

// checkRound compares the store with what the workers were told, after a
// round; it returns the highest version seen so far.
func checkRound(t *testing.T, round int, reader *runtime.Client, workers []*worker, top hlc.HLC) hlc.HLC {
	t.Helper()
	ctx := context.Background()
	var bad []string
	fail := func(format string, a ...any) {
		bad = append(bad, fmt.Sprintf("round %d: ", round)+fmt.Sprintf(format, a...))
	}
	raise := func(v hlc.HLC) {
		if v.Compare(top) > 0 {
			top = v
		}
	}
	keys, expired := 0, 0
	for _, w := range workers {
		for _, e := range w.errs {
			fail("%s", e)
		}
		w.errs = nil
		for _, tok := range w.tokens {
			raise(tok)
		}
		if w.lease != nil {
			select {
			case <-w.lease.Lost():
				w.losses = append(w.losses, w.lease.Err())
				w.lease = nil
			default:
			}
		}
		for _, cause := range w.losses {
			if errors.Is(cause, runtime.ErrLeaseExpired) {
				expired++ // the failover outlasted the TTL: timing, not a fault
				continue
			}
			fail("lock %s: lease lost: %v", w.lock.Name(), cause)
		}
		w.losses = nil
		for _, s := range w.slots {
			keys++
			if !s.expires {
				checkSlot(ctx, reader, s, fail, raise)
			}
		}
	}
	report := func() {
		t.Helper()
		if len(bad) > 0 {
			if len(bad) > 40 {
				bad = append(bad[:40], fmt.Sprintf("… and %d more", len(bad)-40))
			}
			t.Fatalf("%d violations:\n%s", len(bad), strings.Join(bad, "\n"))
		}
	}
	report()
	// Every key written with a TTL expires: its deadline was kept (or
	// re-established by the new leader) across the failover.
	gone := map[*slot]bool{}
	present := func() []*slot {
		var left []*slot
		for _, w := range workers {
			for _, s := range w.slots {
				if !s.expires || gone[s] {
					continue
				}
				_, _, err := reader.Get(ctx, []byte(s.name))
				if errors.Is(err, runtime.ErrNotFound) {
					gone[s] = true
					continue
				}
				left = append(left, s)
			}
		}
		return left
	}
	giveUpTTL := time.Now().Add(watchBound)
	testwait.Until(t, bound, fmt.Sprintf("round %d: keys set with a TTL of %v to expire", round, expiringTTL), func() bool {
		return len(present()) == 0 || time.Now().After(giveUpTTL)
	})
	for _, s := range present() {
		fail("key %s: SET with a TTL of %v (last acknowledged %s, version %v) still there after %v", s.name, expiringTTL, s.acked.value, s.acked.version, watchBound)
	}
	report()
	// Every watched key's watcher has seen each acknowledged version, as a
	// notification or by a resync at or after it. A miss fails the test
	// but not the round: the next rounds still run, so one run reports
	// every kind of failure it meets.
	gaveUp := time.Now().Add(watchBound)
	testwait.Until(t, bound, fmt.Sprintf("round %d: watchers to see every acknowledged SET", round), func() bool {
		if time.Now().After(gaveUp) {
			return true
		}
		for _, w := range workers {
			for _, s := range w.slots {
				if s.w != nil && len(uncovered(s)) > 0 {
					return false
				}
			}
		}
		return true
	})
	missed := 0
	for _, w := range workers {
		for _, s := range w.slots {
			if s.w == nil {
				continue
			}
			if miss := uncovered(s); len(miss) > 0 {
				missed++
				evs, errs, _ := s.w.snapshot()
				t.Errorf("round %d: key %s: acknowledged versions %v never reached its watcher (no notification, no resync in %v); watcher's events:%s; errors %v",
					round, s.name, miss, watchBound, describe(evs), errs)
			}
		}
	}
	for _, w := range workers {
		for _, s := range w.slots {
			if s.w == nil {
				continue
			}
			evs, _, _ := s.w.snapshot()
			for _, ev := range evs {
				if ev.Kind == runtime.EventSet || ev.Kind == runtime.EventResync && ev.Found {
					if ev.Version.Compare(s.lastEvent) < 0 {
						fail("key %s: watcher got %s version %v after version %v", s.name, ev.Kind, ev.Version, s.lastEvent)
					}
					s.lastEvent = ev.Version
				}
			}
			s.w.drop(len(evs))
			s.acks = nil
		}
	}
	// The store's clock is past everything it acknowledged.
	var probe hlc.HLC
	err := retried(func() (err error) {
		probe, err = reader.Set(ctx, []byte("ha/probe"), []byte(fmt.Sprint(round)), runtime.SetOptions{Persist: true})
		return err
	})
	switch {
	case err != nil:
		fail("probe SET: %v", err)
	case probe.Compare(top) <= 0:
		fail("probe SET got version %v, not after the highest version acknowledged before, %v", probe, top)
	}
	raise(probe)
	report()
	t.Logf("round %d: %d keys as acknowledged; %d watched keys missed a notification; %d leases expired during the failover", round, keys, missed, expired)
	return top
}

// checkSlot reads s's key and compares it with the model.
func checkSlot(ctx context.Context, reader *runtime.Client, s *slot, fail func(string, ...any), raise func(hlc.HLC)) {
	var (
		val []byte
		ver hlc.HLC
	)
	err := retried(func() (err error) {
		val, ver, err = reader.Get(ctx, []byte(s.name))
		return err
	})
	want := fmt.Sprintf("%q version %v", s.acked.value, s.acked.version)
	if s.fenced {
		want += fmt.Sprintf(" token %v", s.acked.fence)
	}
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		if s.exists {
			fail("key %s: acknowledged SET lost: want %s, got no key", s.name, want)
		}
		return
	case err != nil:
		fail("key %s: GET: %v", s.name, err)
		return
	}
	raise(ver)
	if ver.Compare(s.seen) < 0 {
		fail("key %s: version went back: %v read after %v", s.name, ver, s.seen)
	}
	s.seen = ver
	got := fmt.Sprintf("%q version %v", val, ver)
	switch {
	case s.exists && string(val) == s.acked.value:
		if ver != s.acked.version {
			fail("key %s: want %s, got %s", s.name, want, got)
		}
	case s.pending != nil && string(val) == s.pending.value:
		// The SET that got no answer landed.
		if s.exists && ver.Compare(s.acked.version) <= 0 {
			fail("key %s: unanswered SET %q landed with version %v, not after the acknowledged %s", s.name, val, ver, want)
		}
		return
	case s.exists:
		fail("key %s: want %s, got %s", s.name, want, got)
		return
	default:
		fail("key %s: never acknowledged, got %s", s.name, got)
		return
	}
	if !s.fenced || s.retired || s.acked.fence.IsZero() {
		return
	}
	// The key still carries its token: a SET with a lower one is refused.
	stale := s.acked.fence
	stale.Wall--
	var v hlc.HLC
	err = retried(func() (err error) {
		v, err = reader.Set(ctx, []byte(s.name), []byte("stale"), runtime.SetOptions{FencingToken: stale, Persist: true})
		return err
	})
	switch {
	case errors.Is(err, runtime.ErrFencingTokenLowerVersion):
	case err == nil:
		fail("key %s: SET with token %v, below the acknowledged %v, accepted (version %v)", s.name, stale, s.acked.fence, v)
		s.retired = true // the model no longer knows this key
	default:
		fail("key %s: SET with a stale token: want %v, got %v", s.name, runtime.ErrFencingTokenLowerVersion, err)
	}
}

// uncovered is the acknowledged versions of s that its watcher has not
// seen: neither a notification of that version nor a resync at or after it.
func uncovered(s *slot) []hlc.HLC {
	evs, _, _ := s.w.snapshot()
	var miss []hlc.HLC
	for _, v := range s.acks {
		seen := false
		for _, ev := range evs {
			if ev.Kind == runtime.EventSet && ev.Version == v || ev.Kind == runtime.EventResync && ev.Version.Compare(v) >= 0 {
				seen = true
				break
			}
		}
		if !seen {
			miss = append(miss, v)
		}
	}
	return miss
}

func describe(evs []runtime.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		if i == 30 {
			fmt.Fprintf(&b, " … %d more", len(evs)-30)
			break
		}
		fmt.Fprintf(&b, " %s@%v", ev.Kind, ev.Version)
	}
	return b.String()
}
