package persist

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// marshalRecord is the record encoding as it was written before
// appendRecord: msgpack's reflective encoder over storedRecord.
func marshalRecord(t *testing.T, r engine.Record) []byte {
	t.Helper()
	sr := storedRecord{Value: r.Value, Version: r.Version.String()}
	if !r.Fence.IsZero() {
		sr.Fence = r.Fence.String()
	}
	if !r.Deadline.IsZero() {
		sr.Deadline = r.Deadline.UnixNano()
	}
	sr.Sum = recordSum([]byte(r.Key), sr.Value, sr.Version, sr.Fence, sr.Deadline)
	b, err := msgpack.Marshal(&sr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendRecordIsMarshal: the hand-written encoding is byte for byte
// the one data files hold, across every length class of msgpack's bin
// and str forms, with and without fencing token and deadline, so files
// written before and after it read alike.
func TestAppendRecordIsMarshal(t *testing.T) {
	v := hlc.HLC{Wall: 1764250000000, Counter: 3, Node: "node-a"}
	var recs []engine.Record
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536, 70000} {
		recs = append(recs,
			engine.Record{Key: "k", Value: make([]byte, n), Version: v},
			engine.Record{Key: strings.Repeat("x", n%300), Value: bytes.Repeat([]byte{0xff}, n), Version: hlc.HLC{Wall: 1, Node: strings.Repeat("n", n%400)}},
		)
	}
	for _, node := range []string{"", "a", strings.Repeat("b", 9), strings.Repeat("c", 10), strings.Repeat("d", 233), strings.Repeat("e", 234), strings.Repeat("f", 70000)} {
		recs = append(recs,
			engine.Record{Key: "fenced", Value: []byte("v"), Version: v, Fence: hlc.HLC{Wall: 7, Counter: 1, Node: node}},
			engine.Record{Key: "versioned", Value: []byte("v"), Version: hlc.HLC{Wall: 99999, Counter: 65535, Node: node}},
		)
	}
	recs = append(recs,
		engine.Record{Key: "nil value", Version: v},
		engine.Record{Key: "deadline", Value: []byte("v"), Version: v, Deadline: time.Unix(0, 1764250000123456789)},
		engine.Record{Key: "deadline at epoch", Value: []byte("v"), Version: v, Deadline: time.Unix(0, 0)},
		engine.Record{Key: "negative deadline", Value: []byte("v"), Version: v, Deadline: time.Unix(-5, 0)},
		engine.Record{Key: "all", Value: []byte("value"), Version: v, Fence: hlc.HLC{Wall: 2, Node: "f"}, Deadline: time.Unix(1764250000, 0)},
	)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		r := engine.Record{Key: string(rune('a' + rng.IntN(26))), Value: make([]byte, rng.IntN(600)),
			Version: hlc.HLC{Wall: rng.Uint64(), Counter: rng.Uint64N(1 << 20), Node: strings.Repeat("n", rng.IntN(40))}}
		if rng.IntN(2) == 0 {
			r.Fence = hlc.HLC{Wall: rng.Uint64N(1 << 50), Node: "fence"}
		}
		if rng.IntN(2) == 0 {
			r.Deadline = time.Unix(0, rng.Int64())
		}
		recs = append(recs, r)
	}
	for i, r := range recs {
		want := marshalRecord(t, r)
		got, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("record %d (key %.20q, value %d B, version %d B): appendRecord\n%x\nmsgpack.Marshal\n%x", i, r.Key, len(r.Value), len(r.Version.String()), got[:min(len(got), 80)], want[:min(len(want), 80)])
		}
		// Appending after other bytes leaves them and adds the same.
		pre := []byte("prefix")
		if got := appendRecord(pre, r); !bytes.Equal(got[:6], []byte("prefix")) || !bytes.Equal(got[6:], want) {
			t.Fatalf("record %d appended after a prefix differs", i)
		}
		back, err := decodeRecord([]byte(r.Key), got, true)
		if err != nil {
			t.Fatalf("record %d does not decode: %v", i, err)
		}
		if back.Version != r.Version || back.Fence != r.Fence || !bytes.Equal(back.Value, r.Value) || (r.Deadline.UnixNano() != 0 && !back.Deadline.Equal(r.Deadline)) {
			t.Fatalf("record %d decodes to %+v", i, back)
		}
	}
}

// TestEncodeGroupAllocations: a group's record is built in the log
// writer's buffer without an allocation per change.
func TestEncodeGroupAllocations(t *testing.T) {
	v := hlc.HLC{Wall: 1764250000000, Node: "node"}
	q := make([]queuedChange, 32)
	for i := range q {
		q[i] = queuedChange{uint64(i + 1), engine.Change{Record: engine.Record{Key: "bench/key", Value: make([]byte, 100), Version: v}}}
	}
	q[7].Delete = true
	buf := make([]byte, 0, 1<<16)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := encodeGroup(buf[:0], q); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("encodeGroup of 32 changes: %v allocations, want 0", n)
	}
}
