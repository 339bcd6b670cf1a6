package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/faultproxy"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

// seed stores n keys "many/NNN" holding "value-NNN" and returns them.
func seed(t testing.TB, c *runtime.Client, n int) [][]byte {
	t.Helper()
	ctx := context.Background()
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "many/%03d", i)
		if _, err := c.Set(ctx, keys[i], fmt.Appendf(nil, "value-%03d", i), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestGetManyReturnsEveryKeyInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		url := b.start(t).url
		c := dial(t, url)
		ctx := testCtx(t)
		stored := seed(t, c, 150)
		// Present keys, absent ones, a duplicate and an empty key.
		keys := append([][]byte{}, stored...)
		keys = append(keys, []byte("many/absent-1"), stored[7], []byte(""), []byte("many/absent-2"))
		before := c.Stats().Requests
		res, err := c.GetMany(ctx, keys, runtime.GetManyOptions{Concurrency: 8})
		if n := c.Stats().Requests - before; n != 152 {
			t.Errorf("sent %d GETs, want 152: each distinct key once, the empty one never", n)
		}
		if len(res) != len(keys) {
			t.Fatalf("%d results for %d keys", len(res), len(keys))
		}
		for i := range stored {
			r := res[i]
			if r.Err != nil || !bytes.Equal(r.Key, keys[i]) || string(r.Value) != fmt.Sprintf("value-%03d", i) || r.Version.IsZero() {
				t.Fatalf("result %d: %q = %q at %s, %v", i, r.Key, r.Value, r.Version, r.Err)
			}
		}
		n := len(stored)
		for _, i := range []int{n, n + 3} {
			if !errors.Is(res[i].Err, runtime.ErrNotFound) || res[i].Value != nil {
				t.Errorf("absent key %q: %q, %v; want ErrNotFound", res[i].Key, res[i].Value, res[i].Err)
			}
		}
		dup := res[n+1]
		if dup.Err != nil || string(dup.Value) != "value-007" || dup.Version != res[7].Version {
			t.Errorf("duplicate: %q at %s, %v; want the first read's result", dup.Value, dup.Version, dup.Err)
		}
		dup.Value[0] = 'X' // each position's value is its own
		if string(res[7].Value) != "value-007" {
			t.Error("a duplicate's value shares memory with the first")
		}
		if !errors.Is(res[n+2].Err, runtime.ErrInvalidArgument) {
			t.Errorf("empty key: %v, want ErrInvalidArgument", res[n+2].Err)
		}
		// Only the empty key failed; absence is an answer.
		var me *runtime.GetManyError
		if !errors.As(err, &me) || me.Failed != 1 || me.Total != len(keys) || !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("call error %v, want a GetManyError of 1 failure matching ErrInvalidArgument", err)
		}
		if res, err := c.GetMany(ctx, stored[:3], runtime.GetManyOptions{}); err != nil || len(res) != 3 {
			t.Fatalf("all present: %d results, %v", len(res), err)
		}
		if res, err := c.GetMany(ctx, nil, runtime.GetManyOptions{}); err != nil || len(res) != 0 {
			t.Fatalf("no keys: %v, %v", res, err)
		}
	})
}

func TestGetKeysDecodesEachKeyAndFailsOnlyItsOwnPosition(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c, other := dial(t, env.url), dial(t, env.url)
		ctx := testCtx(t)
		key := func(c *runtime.Client, name string) *runtime.Key[int] {
			return runtime.NewKey[int](c, []byte(name), codec.Int[int]{})
		}
		for i := range 5 {
			if _, err := key(c, fmt.Sprint("n/", i)).Set(ctx, i*10); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Set(ctx, []byte("n/bad"), []byte("ten"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		// Keys of two clients, a duplicate, an absent key, an undecodable
		// value and a nil handle.
		keys := []*runtime.Key[int]{
			key(c, "n/0"), key(other, "n/1"), key(c, "n/bad"), key(c, "n/2"), nil,
			key(c, "n/absent"), key(c, "n/0"), key(other, "n/4"),
		}
		res, err := runtime.GetKeys(ctx, keys, runtime.GetManyOptions{Concurrency: 3})
		want := map[int]int{0: 0, 1: 10, 3: 20, 6: 0, 7: 40}
		for i, v := range want {
			if r := res[i]; r.Err != nil || r.Value != v || r.Version.IsZero() || r.Key != keys[i] {
				t.Errorf("result %d: %+v, want %d", i, r, v)
			}
		}
		var de *codec.DecodeError
		if !errors.As(res[2].Err, &de) || res[2].Version.IsZero() {
			t.Errorf("undecodable: %+v, want a DecodeError with the version", res[2])
		}
		if !errors.Is(res[4].Err, runtime.ErrInvalidArgument) || res[4].Key != nil {
			t.Errorf("nil handle: %+v, want ErrInvalidArgument", res[4])
		}
		if !errors.Is(res[5].Err, runtime.ErrNotFound) {
			t.Errorf("absent: %+v, want ErrNotFound", res[5])
		}
		var me *runtime.GetManyError
		if !errors.As(err, &me) || me.Failed != 2 || !errors.As(err, &de) {
			t.Fatalf("call error %v, want 2 failures, the first a DecodeError", err)
		}

		// GetEach: the key function's refusal is its position's error.
		refuse := errors.New("refused")
		params := []int{3, -1, 1}
		res, err = runtime.GetEach(ctx, params, runtime.GetManyOptions{}, func(n int) (*runtime.Key[int], error) {
			if n < 0 {
				return nil, refuse
			}
			return key(c, fmt.Sprint("n/", n)), nil
		})
		if res[0].Value != 30 || res[2].Value != 10 || res[0].Err != nil || res[2].Err != nil || res[1].Err != refuse || res[1].Key != nil {
			t.Fatalf("GetEach: %+v", res)
		}
		if !errors.Is(err, refuse) {
			t.Fatalf("GetEach call error %v, want the refusal", err)
		}
	})
}

// proxied starts backend b and returns a client reaching it through a
// fault proxy, with a plain client for setting up.
func proxied(t *testing.T, b backend) (*runtime.Client, *runtime.Client, *faultproxy.Proxy) {
	t.Helper()
	u := b.start(t).url
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p := faultproxy.Start(t, pu.Host)
	cfg := testConfig(t, "mqtt://"+p.Addr())
	cfg.Timeout = 2 * time.Second
	return dialConfig(t, cfg), dial(t, u), p
}

// A GET lost with its connection is sent again after the reconnect, as
// often as Retries allows.
func TestGetManyRetriesWhatTheConnectionLost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, retries := range []int{0, -1} {
			t.Run(fmt.Sprint("retries=", retries), func(t *testing.T) {
				c, direct, p := proxied(t, b)
				ctx := testCtx(t)
				keys := seed(t, direct, 40)
				p.SwallowReplies()
				type result struct {
					res []runtime.GetResult
					err error
				}
				done := make(chan result, 1)
				go func() {
					res, err := c.GetMany(ctx, keys, runtime.GetManyOptions{Concurrency: 4, Retries: retries})
					done <- result{res, err}
				}()
				waitFor(t, "4 GETs in flight", func() bool { return c.Stats().InFlight >= 4 })
				// Once a reply is swallowed, Restore cuts the connection,
				// and the replies not delivered yet are lost with it.
				waitFor(t, "a reply swallowed", func() bool { return p.Swallowed() > 0 })
				p.Restore()
				r := receive(t, "GetMany's end", done)
				lost := 0
				for i, res := range r.res {
					switch {
					case res.Err == nil && string(res.Value) == fmt.Sprintf("value-%03d", i):
					case retries < 0 && errors.Is(res.Err, runtime.ErrConnectionLost):
						lost++
					default:
						t.Fatalf("key %d: %q, %v", i, res.Value, res.Err)
					}
				}
				switch {
				case retries == 0 && r.err != nil:
					t.Fatalf("with retries: %v", r.err)
				case retries < 0 && (lost != 4 || !errors.Is(r.err, runtime.ErrConnectionLost)):
					t.Fatalf("without retries: %d keys lost (want the 4 in flight), call error %v", lost, r.err)
				}
			})
		}
	})
}

// ctx bounds the whole call: GETs in flight when it ends fail with it, and
// the keys not sent yet get the same error without being sent. The
// requests sent before it ended also show the concurrency cap.
func TestGetManyStopsAtTheContextsDeadline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, direct, p := proxied(t, b)
		keys := seed(t, direct, 50)
		p.SwallowReplies()
		ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
		defer cancel()
		before := c.Stats().Requests
		res, err := c.GetMany(ctx, keys, runtime.GetManyOptions{Concurrency: 4})
		if n := c.Stats().Requests - before; n != 4 {
			t.Errorf("%d GETs sent, want 4: the cap, each blocked until the deadline", n)
		}
		for i, r := range res {
			var te *runtime.TimeoutError
			if !errors.As(r.Err, &te) || !errors.Is(r.Err, context.DeadlineExceeded) {
				t.Fatalf("key %d: %v, want a TimeoutError", i, r.Err)
			}
		}
		var me *runtime.GetManyError
		if !errors.As(err, &me) || me.Failed != len(keys) || !errors.Is(err, runtime.ErrTimeout) {
			t.Fatalf("call error %v", err)
		}
		p.Restore()

		// A cancelled call: context.Canceled, nothing sent.
		cctx, cancelNow := context.WithCancel(testCtx(t))
		cancelNow()
		before = c.Stats().Requests
		res, _ = c.GetMany(cctx, keys[:5], runtime.GetManyOptions{})
		if n := c.Stats().Requests - before; n != 0 || !errors.Is(res[0].Err, context.Canceled) {
			t.Fatalf("cancelled call: %d sent, first error %v", n, res[0].Err)
		}
	})
}

// KeyTimeout bounds each attempt, not the call: with no reply ever
// coming, every key times out on its own, twice with one retry.
func TestGetManyKeyTimeoutBoundsEachAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, direct, p := proxied(t, b)
		keys := seed(t, direct, 6)
		p.SwallowReplies()
		before := c.Stats().Requests
		res, err := c.GetMany(testCtx(t), keys, runtime.GetManyOptions{Concurrency: 3, KeyTimeout: 100 * time.Millisecond, Retries: 1})
		if n := c.Stats().Requests - before; n != 12 {
			t.Errorf("%d GETs sent, want 12: every key, twice", n)
		}
		for i, r := range res {
			if !errors.Is(r.Err, runtime.ErrTimeout) {
				t.Fatalf("key %d: %v, want ErrTimeout", i, r.Err)
			}
		}
		if !errors.Is(err, runtime.ErrTimeout) {
			t.Fatalf("call error %v", err)
		}
	})
}
