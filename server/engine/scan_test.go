package engine

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

func TestScan(t *testing.T) {
	runTable(t, []tableCase{
		{name: "empty store is one empty last page", steps: []step{
			{args: args("SCAN *"), want: "*1\r\n*0\r\n", wantTS: true},
		}},
		{name: "matching keys in byte order", steps: []step{
			{args: args("SET b/2 v"), want: ok, wantTS: true},
			{args: args("SET a/1 v"), want: ok, wantTS: true},
			{args: args("SET c v"), want: ok, wantTS: true},
			{args: args("SCAN */*"), want: "*1\r\n*2\r\n" + bulk("a/1") + bulk("b/2"), wantTS: true},
		}},
		{name: "a token this engine did not seal", steps: []step{
			{args: args("SCAN * zz"), want: errp(ErrInvalidToken)},
		}},
		{name: "the hex of a key (the old tokens)", steps: []step{
			{args: args("SET a v"), want: ok, wantTS: true},
			{args: []string{"SCAN", "*", hex.EncodeToString([]byte("a"))}, want: errp(ErrInvalidToken)},
		}},
		{name: "empty token", steps: []step{
			{args: []string{"SCAN", "*", ""}, want: errp(ErrInvalidToken)},
		}},
	})
}

// tok is the token h's engine gives a request without a TokenScope (no
// authorization) for resuming pattern after key.
func (h *harness) tok(pattern, key string) string {
	return h.eng.tokens.seal("", []byte(pattern), key)
}

func TestScanTokenPastEveryKey(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.Put([]byte("a"), nil, PutOptions{})
	h.run(step{args: []string{"SCAN", "*", h.tok("*", "z")}, want: "*1\r\n*0\r\n", wantTS: true})
}

func TestScanPagesThroughEveryKeyOnce(t *testing.T) {
	h := newHarness(t, Config{})
	var want []string
	for i := range 2*scanPage + 7 {
		k := fmt.Sprintf("k%04d", i)
		want = append(want, k)
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	h.eng.Put([]byte("other"), nil, PutOptions{})
	var got []string
	a := args("SCAN k*")
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		res := h.do(step{args: a})
		v, err := resp3.ParseResponse(res.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 || len(v.Elems) > 2 {
			t.Fatalf("page %q: %v", res.Payload, err)
		}
		for _, k := range v.Elems[0].Elems {
			got = append(got, string(k.Str))
		}
		if len(v.Elems) == 1 {
			break
		}
		a = []string{"SCAN", "k*", string(v.Elems[1].Str)}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("SCAN listed %d keys, want %d", len(got), len(want))
	}
}

// walk pages through SCAN pattern from the start, calling between(page)
// after each page but the last, and returns every key listed and how many
// pages were empty but not last.
func (h *harness) walk(pattern string, between func(page int)) (listed []string, emptyPages int) {
	h.t.Helper()
	a := []string{"SCAN", pattern}
	for page := 0; ; page++ {
		if page > 10_000 {
			h.t.Fatal("SCAN does not end")
		}
		res := h.do(step{args: a})
		v, err := resp3.ParseResponse(res.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 || len(v.Elems) > 2 || res.Version.IsZero() {
			h.t.Fatalf("SCAN answered %q: %v", res.Payload, err)
		}
		for _, k := range v.Elems[0].Elems {
			listed = append(listed, string(k.Str))
		}
		if len(v.Elems) == 1 {
			return listed, emptyPages
		}
		if len(v.Elems[0].Elems) == 0 {
			emptyPages++
		}
		a = []string{"SCAN", pattern, string(v.Elems[1].Str)}
		if between != nil {
			between(page)
		}
	}
}

func TestScanRefusesALongPattern(t *testing.T) {
	long := strings.Repeat("?", MaxScanPatternBytes)
	runTable(t, []tableCase{
		{name: "the longest pattern is served", steps: []step{
			{args: []string{"SET", strings.Repeat("k", MaxScanPatternBytes), "v"}, want: ok, wantTS: true},
			{args: []string{"SCAN", long}, want: "*1\r\n*1\r\n" + bulk(strings.Repeat("k", MaxScanPatternBytes)), wantTS: true},
		}},
		{name: "one byte more is the quota error", steps: []step{
			{args: []string{"SCAN", long + "?"}, want: errp(ErrQuotaExceeded)},
			{args: []string{"SCAN", long + "*", "6b"}, want: errp(ErrQuotaExceeded)},
		}},
		{name: "issue 12's pattern", steps: []step{
			{args: []string{"SCAN", "*" + strings.Repeat("a", 16384) + "b"}, want: errp(ErrQuotaExceeded)},
		}},
	})
}

// A request that runs out of keys to examine answers a short, even empty,
// page with a token: the token is the last key examined, and paging
// resumes after it.
func TestScanShortAndEmptyPagesResume(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 3
	for _, k := range []string{"a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3", "d"} {
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	h.runAll([]step{
		{args: args("SCAN *2"), want: "*2\r\n*1\r\n" + bulk("a2") + bulk(h.tok("*2", "a3")), wantTS: true},
		{args: []string{"SCAN", "*2", h.tok("*2", "a3")}, want: "*2\r\n*1\r\n" + bulk("b2") + bulk(h.tok("*2", "b3")), wantTS: true},
		{args: args("SCAN c*"), want: "*1\r\n*3\r\n" + bulk("c1") + bulk("c2") + bulk("c3"), wantTS: true},
		{args: args("SCAN d*"), want: "*1\r\n*1\r\n" + bulk("d"), wantTS: true},
		{args: args("SCAN *x"), want: "*2\r\n*0\r\n" + bulk(h.tok("*x", "a3")), wantTS: true},
	})
	got, empty := h.walk("*x", nil)
	if len(got) != 0 || empty != 3 {
		t.Fatalf("walk of *x listed %q with %d empty pages, want none and 3", got, empty)
	}
	got, empty = h.walk("?[13]", nil)
	if want := []string{"a1", "a3", "b1", "b3", "c1", "c3"}; !slices.Equal(got, want) || empty != 0 {
		t.Fatalf("walk of ?[13] listed %q (%d empty pages), want %q", got, empty, want)
	}
}

// The matching budget bounds a request by key bytes too: with long keys
// each request examines one key.
func TestScanStepBudgetExaminesAtLeastOneKey(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.steps = 100
	var want []string
	for i := range 5 {
		k := fmt.Sprintf("%d%s", i, strings.Repeat("k", 200))
		want = append(want, k)
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	got, _ := h.walk("*", nil)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d", len(got), len(want))
	}
	res := h.do(step{args: args("SCAN *")})
	if want := "*2\r\n*1\r\n" + bulk(want[0]) + bulk(h.tok("*", want[0])); string(res.Payload) != want {
		t.Fatalf("first page %q, want one key and its token", res.Payload)
	}
}

// A pattern with a literal prefix visits only the keys with that prefix:
// with one key examined per request the first page already lists one.
func TestScanSeeksToThePatternsPrefix(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 1
	for _, k := range []string{"a/1", "a/2", "b/1", "b/2", "c/1"} {
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	h.runAll([]step{
		{args: args("SCAN b/*"), want: "*2\r\n*1\r\n" + bulk("b/1") + bulk(h.tok("b/*", "b/1")), wantTS: true},
		// A token before the prefix starts at it.
		{args: []string{"SCAN", "b/*", h.tok("b/*", "a")}, want: "*2\r\n*1\r\n" + bulk("b/1") + bulk(h.tok("b/*", "b/1")), wantTS: true},
		{args: []string{"SCAN", "b/*", h.tok("b/*", "b/1")}, want: "*1\r\n*1\r\n" + bulk("b/2"), wantTS: true},
		{args: []string{"SCAN", "b/*", h.tok("b/*", "b/2")}, want: "*1\r\n*0\r\n", wantTS: true},
		{args: args("SCAN b/2"), want: "*1\r\n*1\r\n" + bulk("b/2"), wantTS: true},
		{args: args("SCAN b"), want: "*1\r\n*0\r\n", wantTS: true},
	})
}

func TestScanIndexFollowsExpiryDeleteAndRestore(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.Restore([]Record{
		{Key: "r/2", Value: []byte("v")},
		{Key: "r/1", Value: []byte("v"), Deadline: t0.Add(2 * time.Second)},
		{Key: "r/0", Value: []byte("v"), Deadline: t0}, // already expired: not restored
	}, hlc.HLC{})
	h.runAll([]step{
		{args: args("SET k/1 v PX 1000"), want: ok, wantTS: true},
		{args: args("SET k/2 v"), want: ok, wantTS: true},
		{args: args("SET k/3 v"), want: ok, wantTS: true},
		{args: args("SCAN *"), want: "*1\r\n*5\r\n" + bulk("k/1") + bulk("k/2") + bulk("k/3") + bulk("r/1") + bulk("r/2"), wantTS: true},
		{args: args("DEL k/2"), want: one, wantTS: true},
		{args: args("VDEL k/3 v"), want: one, wantTS: true},
	})
	h.clock.Advance(time.Second)
	h.eng.Expire()
	h.run(step{args: args("SCAN *"), want: "*1\r\n*2\r\n" + bulk("r/1") + bulk("r/2"), wantTS: true})
	h.clock.Advance(time.Second)
	h.run(step{args: args("SCAN *"), want: "*1\r\n*1\r\n" + bulk("r/2"), wantTS: true})
	checkIndex(t, h.eng)
}

// checkIndex compares the ordered index with the key map.
func checkIndex(t *testing.T, e *Engine) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var fromMap, fromIndex []string
	for k := range e.keys {
		fromMap = append(fromMap, k)
	}
	slices.Sort(fromMap)
	e.order.seek("", func(ent *entry) bool {
		if e.keys[ent.key] != ent {
			t.Errorf("index holds %q, which the map does not", ent.key)
		}
		fromIndex = append(fromIndex, ent.key)
		return true
	})
	if !slices.Equal(fromMap, fromIndex) {
		t.Fatalf("index has %d keys, map %d", len(fromIndex), len(fromMap))
	}
}

// TestScanListsEveryKeyThatExistsForTheWholeWalk interleaves random
// writes (SET, DEL, VDEL, SET with expiry, clock moves) with the pages of
// SCAN walks: every key present from the walk's first page to its last is
// listed, exactly once; no key is listed twice; listed keys come in
// order and match the pattern.
func TestScanListsEveryKeyThatExistsForTheWholeWalk(t *testing.T) {
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 12))
		h := newHarness(t, Config{})
		h.eng.scanLim.examine = 1 + rng.IntN(8)
		key := func() string { return fmt.Sprintf("k/%c%d", 'a'+rng.IntN(4), rng.IntN(60)) }
		write := func() {
			switch k := key(); rng.IntN(5) {
			case 0, 1:
				h.do(step{args: []string{"SET", k, "v"}})
			case 2:
				h.do(step{args: []string{"SET", k, "v", "PX", strconv.Itoa(1 + rng.IntN(3000))}})
			case 3:
				h.do(step{args: []string{"DEL", k}})
			default:
				h.do(step{args: []string{"VDEL", k, "v"}})
			}
		}
		for range 150 {
			write()
		}
		pattern := []string{"*", "k/a*", "*1", "k/[bc]?", "*[!0-4]"}[seed%5]
		pat := glob.Compile(pattern)
		// alive: keys present since the walk began.
		alive := map[string]bool{}
		for _, k := range h.eng.Keys() {
			alive[k] = true
		}
		listed, _ := h.walk(pattern, func(int) {
			for range rng.IntN(4) {
				write()
			}
			h.clock.Advance(time.Duration(rng.IntN(400)) * time.Millisecond)
			present := map[string]bool{}
			for _, k := range h.eng.Keys() {
				present[k] = true
			}
			for k := range alive {
				if !present[k] {
					delete(alive, k)
				}
			}
		})
		for i, k := range listed {
			if !pat.Match(k) {
				t.Fatalf("seed %d: %q listed for %q", seed, k, pattern)
			}
			if i > 0 && listed[i-1] >= k {
				t.Fatalf("seed %d: %q listed after %q", seed, k, listed[i-1])
			}
		}
		for k := range alive {
			if pat.Match(k) && !slices.Contains(listed, k) {
				t.Fatalf("seed %d: %q existed for the whole walk of %q and was not listed", seed, k, pattern)
			}
		}
		checkIndex(t, h.eng)
	}
}

// TestScanWhileOthersWrite runs SCAN walks in one goroutine while others
// write keys of their own: the keys nobody touches are listed exactly
// once per walk (run it with -race).
func TestScanWhileOthersWrite(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 5
	var stable []string
	for i := range 300 {
		k := fmt.Sprintf("s/%03d", i)
		stable = append(stable, k)
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := []byte(fmt.Sprintf("s/%03d/w%d", i%300, w))
				if i%3 == 2 {
					h.eng.Delete(k)
				} else {
					h.eng.Put(k, nil, PutOptions{})
				}
			}
		}()
	}
	for range 3 {
		listed, _ := h.walk("s/???", nil)
		if !slices.Equal(listed, stable) {
			close(stop)
			wg.Wait()
			t.Fatalf("walk listed %d keys, want the %d stable ones", len(listed), len(stable))
		}
	}
	close(stop)
	wg.Wait()
	checkIndex(t, h.eng)
}

// FuzzScanWalk checks paging against a filter of the sorted key set: a
// walk with a small examine bound lists exactly the matching keys, in
// order, whatever the pattern (prefix seeks, literal patterns, tokens).
func FuzzScanWalk(f *testing.F) {
	f.Add("a/1\x00a/2\x00b\x00b/1\x00ba", "b*", uint8(1))
	f.Add("x\x00xy\x00xyz", "xy", uint8(2))
	f.Add("k1\x00k2\x00k3", "*", uint8(3))
	f.Add("[a\x00[b\x00a", "[[]*", uint8(1))
	f.Add("a\\b\x00a*b", `a\*b`, uint8(1))
	f.Fuzz(func(t *testing.T, keys, pattern string, examine uint8) {
		if len(keys) > 2000 || len(pattern) > MaxScanPatternBytes {
			return
		}
		h := newHarness(t, Config{})
		h.eng.scanLim.examine = 1 + int(examine%16)
		for _, k := range strings.Split(keys, "\x00") {
			if k != "" {
				h.eng.Put([]byte(k), nil, PutOptions{})
			}
		}
		pat := glob.Compile(pattern)
		var want []string
		for _, k := range h.eng.Keys() {
			if pat.Match(k) {
				want = append(want, k)
			}
		}
		if got, _ := h.walk(pattern, nil); !slices.Equal(got, want) {
			t.Fatalf("SCAN %q listed %q, want %q", pattern, got, want)
		}
	})
}

// Request.Visible (authorization) hides keys from SCAN without making
// paging skip a visible one: hidden keys move the token along, so pages
// may be short or empty while more follow.
func TestScanListsOnlyVisibleKeys(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 7
	var want []string
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		h.eng.Put([]byte(k), nil, PutOptions{})
		if i%3 == 0 {
			want = append(want, k)
		}
	}
	visible := func(k []byte) bool { n, _ := strconv.Atoi(string(k[1:])); return n%3 == 0 }
	var got []string
	a := []string{"SCAN", "*"}
	for range 1000 {
		req := h.request(step{args: a})
		req.Visible = visible
		v, err := resp3.ParseResponse(h.eng.Handle(req).Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range v.Elems[0].Elems {
			got = append(got, string(k.Str))
		}
		if len(v.Elems) == 1 {
			break
		}
		a = []string{"SCAN", "*", string(v.Elems[1].Str)}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
}

// A page of long keys is cut by bytes, not only by count; one key longer
// than the byte bound is still listed, alone.
func TestScanPageIsBoundedInBytes(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range 10 {
		h.eng.Put([]byte(fmt.Sprintf("%d", i)+strings.Repeat("x", 20<<10)), nil, PutOptions{})
	}
	h.eng.Put([]byte("z"+strings.Repeat("y", scanPageBytes+1)), nil, PutOptions{})
	var sizes []int
	a := []string{"SCAN", "*"}
	for range 100 {
		v, err := resp3.ParseResponse(h.do(step{args: a}).Payload)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(v.Elems[0].Elems))
		if len(v.Elems) == 1 {
			break
		}
		a = []string{"SCAN", "*", string(v.Elems[1].Str)}
	}
	if want := []int{3, 3, 3, 1, 1}; !slices.Equal(sizes, want) {
		t.Fatalf("page sizes %v, want %v", sizes, want)
	}
}

// What Request.Visible costs (Request.VisibleCost) is spent from the
// request's matching budget: a rule set that costs the whole budget per
// key makes each request examine one key (and call Visible once), where
// it used to call it for up to scanExamine keys.
func TestScanCountsVisibleCostInItsBudget(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range 50 {
		h.eng.Put(fmt.Appendf(nil, "k%02d", i), nil, PutOptions{})
	}
	for _, tc := range []struct {
		cost, wantPerRequest int
	}{
		{cost: scanSteps, wantPerRequest: 1},
		{cost: scanSteps/10 - 100, wantPerRequest: 10}, // plus the pattern's own few units per key
	} {
		calls, most, listed := 0, 0, 0
		a := []string{"SCAN", "*"}
		for range 1000 {
			req := h.request(step{args: a})
			calls = 0
			req.Visible = func([]byte) bool { calls++; return true }
			req.VisibleCost = func(int) int { return tc.cost }
			v, err := resp3.ParseResponse(h.eng.Handle(req).Payload)
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, calls)
			listed += len(v.Elems[0].Elems)
			if len(v.Elems) == 1 {
				break
			}
			a = []string{"SCAN", "*", string(v.Elems[1].Str)}
		}
		if most != tc.wantPerRequest || listed != 50 {
			t.Errorf("cost %d: at most %d Visible calls per request and %d keys listed, want %d and 50", tc.cost, most, listed, tc.wantPerRequest)
		}
	}
}
