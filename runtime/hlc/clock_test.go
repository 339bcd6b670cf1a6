package hlc

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// fakeNow is a settable physical clock.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) set(ms int64)   { f.mu.Lock(); f.t = time.UnixMilli(ms); f.mu.Unlock() }

func newFake(ms int64) *fakeNow { f := &fakeNow{}; f.set(ms); return f }

// The public article's example: a SET at 1696374425000:0:Client1 to a
// service whose clock reads the same millisecond gets the version
// 1696374425000:1:StateStore.
func TestUpdateArticleExample(t *testing.T) {
	svc := NewClock("StateStore", WithNow(newFake(1696374425000).Now))
	v, err := svc.Update(HLC{1696374425000, 0, "Client1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (HLC{1696374425000, 1, "StateStore"}); v != want {
		t.Fatalf("version = %v, want %v", v, want)
	}
	if v.Compare(HLC{1696374425000, 0, "Client1"}) <= 0 {
		t.Fatal("version must be greater than the request timestamp")
	}
}

func TestNowTicks(t *testing.T) {
	phys := newFake(1000)
	c := NewClock("n", WithNow(phys.Now))
	steps := []struct {
		phys int64
		want HLC
	}{
		{1000, HLC{1000, 0, "n"}}, // physical ahead of the zero clock
		{1000, HLC{1000, 1, "n"}}, // same millisecond: counter+1
		{999, HLC{1000, 2, "n"}},  // physical went backwards: still monotonic
		{1001, HLC{1001, 0, "n"}}, // physical ahead again: counter resets
	}
	for i, s := range steps {
		phys.set(s.phys)
		got, err := c.Now()
		if err != nil || got != s.want {
			t.Fatalf("step %d: Now() = %v, %v; want %v", i, got, err, s.want)
		}
		if c.Last() != got {
			t.Fatalf("step %d: Last() = %v, want %v", i, c.Last(), got)
		}
	}
}

func TestUpdateMergeRule(t *testing.T) {
	cases := []struct {
		name   string
		phys   int64
		last   HLC
		remote HLC
		want   HLC
	}{
		{"PhysicalAloneWins", 2000, HLC{1000, 5, "n"}, HLC{1500, 9, "r"}, HLC{2000, 0, "n"}},
		{"RemoteWins", 1000, HLC{900, 5, "n"}, HLC{1500, 9, "r"}, HLC{1500, 10, "n"}},
		{"LocalWins", 1000, HLC{1600, 5, "n"}, HLC{1500, 9, "r"}, HLC{1600, 6, "n"}},
		{"LocalAndRemoteTie", 1000, HLC{1500, 5, "n"}, HLC{1500, 9, "r"}, HLC{1500, 10, "n"}},
		{"LocalAndRemoteTieLocalCounterHigher", 1000, HLC{1500, 12, "n"}, HLC{1500, 9, "r"}, HLC{1500, 13, "n"}},
		{"PhysicalTiesRemote", 1500, HLC{}, HLC{1500, 3, "r"}, HLC{1500, 4, "n"}},
		{"PhysicalTiesLocal", 1500, HLC{1500, 3, "n"}, HLC{1000, 9, "r"}, HLC{1500, 4, "n"}},
		{"RemoteBehind", 1500, HLC{}, HLC{10, 3, "r"}, HLC{1500, 0, "n"}},
		{"RemoteWithinDrift", 1000, HLC{}, HLC{1000 + 60000, 0, "r"}, HLC{61000, 1, "n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClock("n", WithNow(newFake(tc.phys).Now))
			c.last = tc.last
			got, err := c.Update(tc.remote)
			if err != nil || got != tc.want {
				t.Fatalf("Update(%v) = %v, %v; want %v", tc.remote, got, err, tc.want)
			}
			for _, prev := range []HLC{tc.last, tc.remote} {
				if (HLC{got.Wall, got.Counter, ""}).Compare(HLC{prev.Wall, prev.Counter, ""}) <= 0 {
					t.Fatalf("merged clock %v not after %v", got, prev)
				}
			}
		})
	}
}

func TestUpdateRefusesDrift(t *testing.T) {
	c := NewClock("n", WithNow(newFake(1000).Now), WithMaxDrift(time.Minute))
	before := c.Last()
	_, err := c.Update(HLC{1000 + 60001, 0, "r"})
	if !errors.Is(err, ErrDrift) {
		t.Fatalf("err = %v, want ErrDrift", err)
	}
	var de *DriftError
	if !errors.As(err, &de) || de.MaxDrift != time.Minute || de.Remote.Wall != 61001 {
		t.Fatalf("err = %#v, want a *DriftError with details", err)
	}
	if c.Last() != before {
		t.Fatal("a refused update changed the clock")
	}
	if err := c.CheckDrift(HLC{Wall: 61000}, time.UnixMilli(1000)); err != nil {
		t.Fatalf("exactly max drift ahead must pass: %v", err)
	}
}

func TestCounterOverflow(t *testing.T) {
	c := NewClock("n", WithNow(newFake(1000).Now))
	if _, err := c.Update(HLC{1000, math.MaxUint64 - 1, "r"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Now(); !errors.Is(err, ErrCounterOverflow) {
		t.Fatalf("Now() err = %v, want ErrCounterOverflow", err)
	}
	if _, err := c.Update(HLC{1000, math.MaxUint64, "r"}); !errors.Is(err, ErrCounterOverflow) {
		t.Fatalf("Update err = %v, want ErrCounterOverflow", err)
	}
}

func TestClockIsMonotonicUnderConcurrency(t *testing.T) {
	c := NewClock("n", WithNow(newFake(5000).Now))
	const workers, each = 8, 500
	results := make(chan HLC, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var h HLC
				var err error
				if (w+i)%2 == 0 {
					h, err = c.Now()
				} else {
					h, err = c.Update(HLC{5000, uint64(i), "r"})
				}
				if err != nil {
					t.Error(err)
					return
				}
				results <- h
			}
		}()
	}
	wg.Wait()
	close(results)
	seen := map[HLC]bool{}
	for h := range results {
		if seen[h] {
			t.Fatalf("duplicate value %v", h)
		}
		seen[h] = true
	}
}

func ExampleClock() {
	physical := time.UnixMilli(1696374425000)
	service := NewClock("StateStore", WithNow(func() time.Time { return physical }))
	request, _ := Parse("1696374425000:0:Client1")
	version, _ := service.Update(request)
	fmt.Println(version)
	// Output: 001696374425000:00001:StateStore
}
