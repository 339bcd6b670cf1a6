package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// journal is a Config.Journal that settles synchronously: a Wait (or a
// summary) writes everything appended so far as one transaction, or
// while fail is set abandons it all. Tests drive it from one goroutine.
type journal struct {
	eng    *Engine
	calls  [][]Change // the entries written, in order
	queued []queuedEntry
	done   uint64 // every number up to done is settled
	failed [][2]uint64
	fail   bool
}

type queuedEntry struct {
	seq     uint64
	changes []Change
}

var errDiskFull = errors.New("disk full")

func (j *journal) Append(seq uint64, cs []Change) {
	j.queued = append(j.queued, queuedEntry{seq, append([]Change(nil), cs...)})
}

func (j *journal) Wait(seq uint64) error {
	if seq > j.done {
		j.settle()
	}
	for _, f := range j.failed {
		if seq >= f[0] && seq <= f[1] {
			return errDiskFull
		}
	}
	return nil
}

// settle writes or abandons everything queued, as one transaction.
func (j *journal) settle() {
	if len(j.queued) == 0 {
		return
	}
	lo, hi := j.queued[0].seq, j.queued[len(j.queued)-1].seq
	if j.fail {
		last := j.eng.Abandon(lo)
		j.failed = append(j.failed, [2]uint64{lo, last})
		j.queued, j.done = nil, last
		return
	}
	for _, q := range j.queued {
		j.calls = append(j.calls, q.changes)
	}
	j.queued, j.done = nil, hi
	j.eng.Durable(hi)
}

// summary is the journal as "put k" / "del k" lines, one per change,
// after settling what is queued.
func (j *journal) summary() []string {
	j.settle()
	var out []string
	for _, call := range j.calls {
		for _, c := range call {
			if c.Delete {
				out = append(out, "del "+c.Key)
			} else {
				out = append(out, "put "+c.Key+"="+string(c.Value))
			}
		}
	}
	j.calls = nil
	return out
}

func newPersistHarness(t *testing.T, all bool) (*harness, *journal) {
	j := &journal{}
	h := newHarness(t, Config{Journal: j, PersistAll: all})
	j.eng = h.eng
	return h, j
}

// persisted runs a request carrying the persistence flag.
func (h *harness) persisted(s step) Result {
	h.t.Helper()
	req := h.request(s)
	req.Persist = true
	return h.eng.Handle(req)
}

func TestPersistWritesOnlyFlaggedKeysAndForgetsThemWhenAWriteDropsTheFlag(t *testing.T) {
	h, j := newPersistHarness(t, false)
	h.persisted(step{args: args("SET a 1")})
	h.do(step{args: args("SET b 1")})            // volatile: nothing on disk
	h.do(step{args: args("SET a 2")})            // a becomes volatile: its record goes
	h.do(step{args: args("DEL a")})              // a volatile now: nothing
	h.persisted(step{args: args("SET c 1 NX")})  // put
	h.persisted(step{args: args("SET c 2 NX")})  // condition fails: nothing
	h.persisted(step{args: args("SET c 1 NEX")}) // same value: stored again
	h.do(step{args: args("VDEL c 9")})           // differs: nothing
	h.do(step{args: args("VDEL c 1")})           // del
	want := []string{"put a=1", "del a", "put c=1", "put c=1", "del c"}
	if got := j.summary(); !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestPersistAllKeepsUnflaggedWrites(t *testing.T) {
	h, j := newPersistHarness(t, true)
	h.do(step{args: args("SET a 1")})
	h.do(step{args: args("DEL a")})
	if got, want := j.summary(), []string{"put a=1", "del a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestPersistChangeCarriesVersionFenceAndAbsoluteDeadline(t *testing.T) {
	h, j := newPersistHarness(t, false)
	ft := tsAt(-time.Second, 3, "lock")
	res := h.persisted(step{args: args("SET k v PX 1500"), ft: ft})
	c := j.calls[0][0]
	if c.Version != res.Version || c.Fence != mustParse(t, ft) || !c.Deadline.Equal(t0.Add(1500*time.Millisecond)) {
		t.Fatalf("change %+v; want version %v, fence %s, deadline %v", c, res.Version, ft, t0.Add(1500*time.Millisecond))
	}
}

func TestPersistFailureAnswersAnErrorAndLeavesMemoryUntouched(t *testing.T) {
	h, j := newPersistHarness(t, false)
	h.persisted(step{args: args("SET k old")})
	before, _ := h.eng.Lookup([]byte("k"))
	h.eng.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("k")}, Client: "W"})
	h.takeNotes()
	j.fail = true
	for _, s := range []step{
		{args: args("SET k new"), want: errp(ErrPersistence)},
		{args: args("SET k new2 PX 10"), want: errp(ErrPersistence)},
		{args: args("DEL k"), want: errp(ErrPersistence)},
		{args: args("VDEL k old"), want: errp(ErrPersistence)},
	} {
		res := h.persisted(s)
		if string(res.Payload) != s.want || !res.Version.IsZero() {
			t.Fatalf("%q: %q %v, want %q and no version", strings.Join(s.args, " "), res.Payload, res.Version, s.want)
		}
	}
	// An unflagged SET must delete the durable record first; failing that,
	// it is refused too.
	if res := h.do(step{args: args("SET k new")}); string(res.Payload) != errp(ErrPersistence) {
		t.Fatalf("unflagged SET over a durable key: %q", res.Payload)
	}
	if err := h.eng.Put([]byte("k"), []byte("x"), PutOptions{}); !errors.Is(err, ErrPersistence) {
		t.Fatalf("Put: %v, want ErrPersistence", err)
	}
	if h.eng.Delete([]byte("k")) {
		t.Fatal("Delete reported success")
	}
	after, found := h.eng.Lookup([]byte("k"))
	if !found || !reflect.DeepEqual(before, after) {
		t.Fatalf("key changed: %+v -> %+v", before, after)
	}
	// Their notifications were made, but each waits for a change the
	// journal abandoned: a transport drops them.
	for _, n := range h.takeNotes() {
		if n.Wait == 0 || j.Wait(n.Wait) == nil {
			t.Fatalf("notification of a refused write deliverable: %+v", n)
		}
	}
	// A volatile key needs no disk and is unaffected by the failure.
	h.run(step{args: args("SET v 1"), want: ok, wantTS: true})
}

func TestPersistExpiryDeletesDurableRecordsOnly(t *testing.T) {
	h, j := newPersistHarness(t, false)
	h.persisted(step{args: args("SET d 1 PX 100")})
	h.do(step{args: args("SET v 1 PX 100")})
	j.summary()
	h.clock.Advance(time.Second)
	h.eng.Expire()
	if got, want := j.summary(), []string{"del d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestPersistExpiryFailureStillExpiresInMemory(t *testing.T) {
	h, j := newPersistHarness(t, false)
	h.persisted(step{args: args("SET d 1 PX 100")})
	j.fail = true
	h.clock.Advance(time.Second)
	h.eng.Expire()
	if _, ok := h.eng.Lookup([]byte("d")); ok {
		t.Fatal("expired key still there")
	}
}

func TestRestoreDropsExpiredRecordsAndKeepsTheRest(t *testing.T) {
	h, j := newPersistHarness(t, false)
	v := mustParse(t, tsAt(-time.Hour, 0, "StateStore"))
	ft := mustParse(t, tsAt(-2*time.Hour, 1, "lock"))
	expired := h.eng.Restore([]Record{
		{Key: "live", Value: []byte("1"), Version: v, Fence: ft, Deadline: t0.Add(time.Minute)},
		{Key: "dead", Value: []byte("2"), Version: v, Deadline: t0},
		{Key: "forever", Value: []byte("3"), Version: v},
	}, hlc.HLC{})
	if !reflect.DeepEqual(expired, []string{"dead"}) {
		t.Fatalf("expired %q, want [dead]", expired)
	}
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("Restore notified: %v", n)
	}
	got, ok := h.eng.Lookup([]byte("live"))
	if !ok || string(got.Value) != "1" || got.Version != v || got.FencingToken != ft || !got.Deadline.Equal(t0.Add(time.Minute)) {
		t.Fatalf("live = %+v, %v", got, ok)
	}
	if h.eng.Len() != 2 {
		t.Fatalf("Len %d, want 2", h.eng.Len())
	}
	// Restored keys are durable: overwriting without the flag deletes the
	// record, and the fence still guards them.
	h.run(step{args: args("SET live x"), want: errp(ErrFencingTokenRequired)})
	h.do(step{args: args("SET forever x")})
	if got, want := j.summary(), []string{"del forever"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	h.clock.Advance(2 * time.Minute)
	h.eng.Expire()
	if got, want := j.summary(), []string{"del live"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestRestoreMovesTheClockPastStoredVersionsAndTheFloor(t *testing.T) {
	cases := []struct {
		name  string
		recs  []Record
		floor hlc.HLC
	}{
		{"version ahead", []Record{{Key: "k", Value: []byte("v"), Version: hlc.HLC{Wall: uint64(t0.UnixMilli()) + 5000, Counter: 7, Node: "StateStore"}}}, hlc.HLC{}},
		{"fence ahead", []Record{{Key: "k", Value: []byte("v"), Version: hlc.HLC{Wall: 1, Node: "StateStore"}, Fence: hlc.HLC{Wall: uint64(t0.UnixMilli()) + 5000, Node: "lock"}}}, hlc.HLC{}},
		{"floor of a deleted key ahead", nil, hlc.HLC{Wall: uint64(t0.UnixMilli()) + 5000, Counter: 2, Node: "StateStore"}},
		// Beyond the clock's drift bound: the physical clock went back
		// while the service was down.
		{"a day ahead", nil, hlc.HLC{Wall: uint64(t0.Add(24 * time.Hour).UnixMilli()), Node: "StateStore"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newPersistHarness(t, false)
			h.eng.Restore(tc.recs, tc.floor)
			top := tc.floor
			for _, r := range tc.recs {
				for _, v := range []hlc.HLC{r.Version, r.Fence} {
					if v.Compare(top) > 0 {
						top = v
					}
				}
			}
			for i := 0; i < 3; i++ {
				res := h.do(step{args: args("SET n v")})
				if res.Version.Compare(top) <= 0 {
					t.Fatalf("new version %v not after %v", res.Version, top)
				}
				top = res.Version
			}
		})
	}
}

// MaxKeptKeyBytes bounds the key of a kept write only (SET with the
// flag or under PersistAll, Put, Import): a longer one is the quota
// error and reaches neither memory nor the journal; unkept, the same key
// is stored.
func TestPersistMaxKeptKeyBytesBoundsKeptWritesOnly(t *testing.T) {
	quota := "-ERR " + string(ErrQuotaExceeded) + "\r\n"
	for _, tc := range []struct {
		name    string
		all     bool
		persist bool
		key     string
		want    string
	}{
		{"kept, at the limit", false, true, "abcd", "+OK\r\n"},
		{"kept, over", false, true, "abcde", quota},
		{"persist-all, over", true, false, "abcde", quota},
		{"not kept, over", false, false, "abcde", "+OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &journal{}
			h := newHarness(t, Config{Journal: j, PersistAll: tc.all, MaxKeptKeyBytes: 4})
			j.eng = h.eng
			req := h.request(step{args: args("SET " + tc.key + " v")})
			req.Persist = tc.persist
			if got := string(h.eng.Handle(req).Payload); got != tc.want {
				t.Fatalf("SET: %q, want %q", got, tc.want)
			}
			_, stored := h.eng.Lookup([]byte(tc.key))
			if stored != (tc.want != quota) {
				t.Fatalf("stored = %v", stored)
			}
			err := h.eng.Put([]byte(tc.key), []byte("p"), PutOptions{Persist: tc.persist})
			if (err == nil) != (tc.want != quota) || err != nil && !errors.Is(err, ErrQuotaExceeded) {
				t.Fatalf("Put: %v", err)
			}
			_, err = h.eng.Import(Snapshot{Items: []Item{{Key: tc.key, Value: []byte("i"), Persist: tc.persist}}}, ImportOptions{Mode: ImportMerge})
			if (err == nil) != (tc.want != quota) || err != nil && !errors.Is(err, ErrQuotaExceeded) {
				t.Fatalf("Import: %v", err)
			}
			if tc.want == quota && len(j.summary()) != 0 {
				t.Fatalf("journal got %q", j.summary())
			}
		})
	}
}
