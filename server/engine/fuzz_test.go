package engine

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// FuzzHandle feeds arbitrary requests to an engine: raw holds requests
// separated by 0x01, each a list of arguments separated by 0x00; every
// request carries ts and ft when present. It checks that the engine never
// panics, that every payload is a non-empty, parseable RESP3 value, that
// errors are contract texts without __ts, that only a GET miss answers
// without __ts, and that expiry leaves nothing due.
func FuzzHandle(f *testing.F) {
	seeds := []struct {
		raw       string
		ts        string
		hasTS     bool
		ft        string
		hasFT     bool
		advanceMs uint16
	}{
		{"SET\x00k\x00v", "1696374425000:0:C", true, "", false, 0},
		{"SET\x00k\x00v\x00NX\x01SET\x00k\x00w\x00NX", "1696374425000:0:C", true, "", false, 0},
		{"SET\x00k\x00v\x00NEX\x00PX\x0010\x01GET\x00k", "1696374425000:0:C", true, "", false, 20},
		{"KEYNOTIFY\x00k\x01SET\x00k\x00v\x00PX\x005\x01DEL\x00k", "1696374425000:0:C", true, "", false, 10},
		{"SET\x00k\x00v\x01VDEL\x00k\x00v\x01VDEL\x00k\x00v", "1696374425000:0:C", true, "1696374425000:1:S", true, 0},
		{"SET\x00k\x00v\x00PX", "001696374425000:00000:C", true, "x", true, 0},
		{"SET\x00\x00v", "", false, "", false, 0},
		{"KEYNOTIFY\x00k\x00STOP", "junk", true, "", false, 0},
		{"SCAN\x00*\x01SCAN\x00k*\x006b", "1:0:C", true, "", false, 0},
		{"set\x00k\x00v", "9999999999999:0:C", true, "", false, 0},
		{"", "", false, "", false, 0},
		{"SET\x00k\x00v\x00PX\x009223372036854", "1696374425000:18446744073709551615:C", true, "", false, 0},
	}
	for _, s := range seeds {
		f.Add([]byte(s.raw), s.ts, s.hasTS, s.ft, s.hasFT, s.advanceMs)
	}
	f.Fuzz(func(t *testing.T, raw []byte, ts string, hasTS bool, ft string, hasFT bool, advanceMs uint16) {
		clock := NewFakeClock(t0)
		e := New(Config{Now: clock.Now, MaxKeys: 8, MaxBytes: 1 << 12, OnNotify: func(n Notification) {
			if _, err := resp3.ParseNotification(n.Payload); err != nil {
				t.Fatalf("notification %q: %v", n.Payload, err)
			}
			if n.Version.IsZero() || len(n.Key) == 0 {
				t.Fatalf("notification without version or key: %+v", n)
			}
		}})
		e.Handle(Request{Args: [][]byte{[]byte("KEYNOTIFY"), []byte("k")}, Client: "w"})
		for _, r := range bytes.Split(raw, []byte{1}) {
			req := Request{Args: bytes.Split(r, []byte{0}), Client: "c",
				Timestamp: ts, HasTimestamp: hasTS, FencingToken: ft, HasFencingToken: hasFT}
			if len(r) == 0 {
				req.Args = nil
			}
			if err := checkResult(req, e.Handle(req)); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Duration(advanceMs) * time.Millisecond)
		next, ok := e.Expire()
		if ok && !next.After(clock.Now()) {
			t.Fatalf("Expire left a due deadline %v", next)
		}
		if e.Len() > 8 || e.Bytes() > 1<<12 {
			t.Fatalf("quota broken: %d keys, %d bytes", e.Len(), e.Bytes())
		}
	})
}

// checkResult returns what is wrong with res as the answer to req.
func checkResult(req Request, res Result) error {
	if len(res.Payload) == 0 {
		return fmt.Errorf("%q: empty payload", req.Args)
	}
	v, err := resp3.ParseResponse(res.Payload)
	if err != nil {
		return fmt.Errorf("%q: payload %q: %w", req.Args, res.Payload, err)
	}
	switch v.Kind {
	case resp3.KindError:
		if _, known := errPayloads[Error(v.ErrorText())]; !known {
			return fmt.Errorf("%q: unknown error %q", req.Args, res.Payload)
		}
		if !res.Version.IsZero() {
			return fmt.Errorf("%q: error with __ts %v", req.Args, res.Version)
		}
	case resp3.KindNull:
		if !res.Version.IsZero() {
			return fmt.Errorf("%q: GET miss with __ts %v", req.Args, res.Version)
		}
	default:
		if res.Version.IsZero() {
			return fmt.Errorf("%q: %q without __ts", req.Args, res.Payload)
		}
	}
	return nil
}
