package runtime_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestOpsAndTheirOutcomes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		c := dial(t, url)
		ctx := testCtx(t)
		k := func(s string) []byte { return []byte(s) }

		if _, _, err := c.Get(ctx, k("k1")); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
		}
		v1, err := c.Set(ctx, k("k1"), k("v1"), runtime.SetOptions{})
		if err != nil || v1.IsZero() {
			t.Fatalf("Set = %v, %v", v1, err)
		}
		if got, ver, err := c.Get(ctx, k("k1")); err != nil || string(got) != "v1" || ver != v1 {
			t.Fatalf("Get = %q, %v, %v; want v1 at the Set's version %v", got, ver, err, v1)
		}
		if c.Clock().Last().Compare(v1) <= 0 {
			t.Errorf("the client clock %v did not merge the response version %v", c.Clock().Last(), v1)
		}

		// NX and NEX.
		if _, err := c.Set(ctx, k("k1"), k("other"), runtime.SetOptions{Condition: runtime.IfNotExists}); !errors.Is(err, runtime.ErrConditionNotMet) {
			t.Errorf("NX on a present key: %v, want ErrConditionNotMet", err)
		}
		if _, err := c.Set(ctx, k("k2"), k("x"), runtime.SetOptions{Condition: runtime.IfNotExists}); err != nil {
			t.Errorf("NX on a missing key: %v", err)
		}
		if _, err := c.Set(ctx, k("k1"), k("v1"), runtime.SetOptions{Condition: runtime.IfNotExistsOrEqual}); err != nil {
			t.Errorf("NEX with the same value: %v", err)
		}
		if _, err := c.Set(ctx, k("k1"), k("v2"), runtime.SetOptions{Condition: runtime.IfNotExistsOrEqual}); !errors.Is(err, runtime.ErrConditionNotMet) {
			t.Errorf("NEX with another value: %v, want ErrConditionNotMet", err)
		}

		// Arbitrary bytes, and the empty value.
		bin := []byte("a\r\n$-1\r\n\x00\xff")
		if _, err := c.Set(ctx, bin, bin, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _, err := c.Get(ctx, bin); err != nil || !bytes.Equal(got, bin) {
			t.Errorf("binary round trip: %q, %v", got, err)
		}
		if _, err := c.Set(ctx, k("empty"), nil, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _, err := c.Get(ctx, k("empty")); err != nil || len(got) != 0 {
			t.Errorf("empty value: %q, %v", got, err)
		}

		// DEL and VDEL.
		if del, ver, err := c.Del(ctx, k("k2"), runtime.DelOptions{}); err != nil || !del || ver.IsZero() {
			t.Errorf("Del of a present key = %v, %v, %v", del, ver, err)
		}
		if del, _, err := c.Del(ctx, k("k2"), runtime.DelOptions{}); err != nil || del {
			t.Errorf("Del of a missing key = %v, %v", del, err)
		}
		if _, _, err := c.VDel(ctx, k("k1"), k("nope"), runtime.DelOptions{}); !errors.Is(err, runtime.ErrConditionNotMet) {
			t.Errorf("VDel with another value: %v, want ErrConditionNotMet", err)
		}
		if del, _, err := c.VDel(ctx, k("k1"), k("v1"), runtime.DelOptions{}); err != nil || !del {
			t.Errorf("VDel with the value = %v, %v", del, err)
		}
		if del, _, err := c.VDel(ctx, k("k1"), k("v1"), runtime.DelOptions{}); err != nil || del {
			t.Errorf("VDel of a missing key = %v, %v", del, err)
		}

		// KEYNOTIFY, and STOP of a registration that is not there.
		if err := c.KeyNotify(ctx, k("k1")); err != nil {
			t.Errorf("KeyNotify: %v", err)
		}
		if err := c.KeyNotifyStop(ctx, k("k1")); err != nil {
			t.Errorf("KeyNotifyStop: %v", err)
		}
		if err := c.KeyNotifyStop(ctx, k("k1")); err != nil {
			t.Errorf("KeyNotifyStop without registration: %v", err)
		}
		if s := c.Stats(); s.Requests < 15 || s.Errors != 0 || s.InFlight != 0 {
			t.Errorf("Stats = %+v", s)
		}
	})
}

func TestArgumentsRefusedBeforeSending(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	checks := map[string]error{}
	_, _, checks["Get empty key"] = c.Get(ctx, nil)
	_, checks["Set empty key"] = c.Set(ctx, nil, []byte("v"), runtime.SetOptions{})
	_, checks["Set negative TTL"] = c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{TTL: -time.Second})
	_, checks["Set unknown condition"] = c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{Condition: 7})
	_, _, checks["Del empty key"] = c.Del(ctx, []byte{}, runtime.DelOptions{})
	_, _, checks["VDel empty key"] = c.VDel(ctx, nil, []byte("v"), runtime.DelOptions{})
	checks["KeyNotify empty key"] = c.KeyNotify(ctx, nil)
	checks["KeyNotifyStop empty key"] = c.KeyNotifyStop(ctx, nil)
	for name, err := range checks {
		if !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if n := c.Stats().Requests; n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

func TestFencingErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		c := dial(t, url)
		ctx := testCtx(t)
		ft, err := c.Set(ctx, []byte("lock"), []byte("me"), runtime.SetOptions{Condition: runtime.IfNotExistsOrEqual, TTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte("res"), []byte("a"), runtime.SetOptions{FencingToken: ft}); err != nil {
			t.Fatalf("fenced Set: %v", err)
		}
		if _, err := c.Set(ctx, []byte("res"), []byte("b"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Errorf("unfenced Set of a fenced key: %v", err)
		}
		older := ft
		older.Wall--
		if _, err := c.Set(ctx, []byte("res"), []byte("b"), runtime.SetOptions{FencingToken: older}); !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
			t.Errorf("Set with an older token: %v", err)
		}
		if _, _, err := c.Del(ctx, []byte("res"), runtime.DelOptions{}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
			t.Errorf("unfenced Del of a fenced key: %v", err)
		}
		future := hlc.HLC{Wall: uint64(time.Now().Add(5 * time.Minute).UnixMilli()), Node: "x"}
		if _, err := c.Set(ctx, []byte("res"), []byte("b"), runtime.SetOptions{FencingToken: future}); !errors.Is(err, runtime.ErrFencingTokenSkew) {
			t.Errorf("Set with a token from the future: %v", err)
		}
		var se *runtime.ServiceError
		if _, _, err := c.VDel(ctx, []byte("res"), []byte("a"), runtime.DelOptions{FencingToken: older}); !errors.As(err, &se) || !errors.Is(err, runtime.ErrFencingTokenLowerVersion) {
			t.Errorf("VDel with an older token: %v", err)
		}
		if del, _, err := c.Del(ctx, []byte("res"), runtime.DelOptions{FencingToken: ft}); err != nil || !del {
			t.Errorf("fenced Del = %v, %v", del, err)
		}
	})
}

func TestClientClockAheadIsRefusedAsTimestampSkew(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		cfg := testConfig(t, url)
		cfg.Now = func() time.Time { return time.Now().Add(5 * time.Minute) }
		c := dialConfig(t, cfg)
		if _, err := c.Set(testCtx(t), []byte("k"), []byte("v"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrTimestampSkew) {
			t.Fatalf("Set from a clock 5 min ahead: %v, want ErrTimestampSkew", err)
		}
	})
}

func TestQuotaExceeded(t *testing.T) {
	url := backends[0].start(t, servertest.WithOptions(func(o *server.Options) { o.MaxKeys = 1 })).url
	c := dial(t, url)
	ctx := testCtx(t)
	if _, err := c.Set(ctx, []byte("a"), []byte("1"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, []byte("b"), []byte("1"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("Set beyond the quota: %v, want ErrQuotaExceeded", err)
	}
}

func TestTTLExpires(t *testing.T) {
	clock := engine.NewFakeClock(time.Now())
	url := backends[0].start(t, servertest.WithOptions(func(o *server.Options) { o.Now = clock.Now })).url
	c := dial(t, url)
	ctx := testCtx(t)
	if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, []byte("k")); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	clock.Advance(1500 * time.Millisecond)
	if _, _, err := c.Get(ctx, []byte("k")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after expiry: %v, want ErrNotFound", err)
	}
	// A later Set without TTL makes the key persistent.
	if _, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, []byte("k"), []byte("v2"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if got, _, err := c.Get(ctx, []byte("k")); err != nil || string(got) != "v2" {
		t.Fatalf("persistent key after an hour: %q, %v", got, err)
	}
}
