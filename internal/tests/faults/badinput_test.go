package faults

import (
	"bytes"
	"context"
	"errors"
	"math"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// allocated returns the bytes one call of f allocates: the least over
// runs, since TotalAlloc also counts what other goroutines allocate
// meanwhile.
func allocated(runs int, f func()) uint64 {
	least := uint64(math.MaxUint64)
	goruntime.GC()
	for range runs {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		f()
		goruntime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// A payload announcing a huge array or bulk string is refused from its
// header: the decoder allocates for what the payload holds, never for what
// it announces.
func TestResp3RefusesHugeAnnouncedLengthsWithoutAllocatingForThem(t *testing.T) {
	deep := strings.Repeat("*1\r\n", resp3.MaxDepth+2) + ":1\r\n"
	for _, payload := range []string{
		"*2147483647\r\n",
		"*9223372036854775807\r\n",
		"*99999999999999999999999\r\n",
		"$2147483647\r\n",
		"*2\r\n$3\r\nSET\r\n$1073741824\r\nk\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1073741824\r\n" + strings.Repeat("v", 1000),
		"*1000000\r\n$0\r\n\r\n",
		deep,
	} {
		p := []byte(payload)
		check := func(name string, parse func([]byte) error) {
			var err error
			per := allocated(20, func() { err = parse(p) })
			if !errors.Is(err, resp3.ErrSyntax) {
				t.Errorf("%s(%.40q): %v, want ErrSyntax", name, payload, err)
			}
			if per > 4096 {
				t.Errorf("%s(%.40q) allocated %d bytes", name, payload, per)
			}
		}
		check("ParseRequest", func(b []byte) error { _, err := resp3.ParseRequest(b, nil); return err })
		check("ParseResponse", func(b []byte) error { _, err := resp3.ParseResponse(b); return err })
		check("ParseNotification", func(b []byte) error { _, err := resp3.ParseNotification(b); return err })
	}
}

// A large but well-formed request costs memory in proportion to its
// element count, never to its byte size: elements alias the payload.
func TestResp3LargeRequestsDecodeWithoutCopying(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 16<<20)
	payload := resp3.AppendCommand(nil, []byte("SET"), []byte("k"), big)
	var args [][]byte
	var err error
	per := allocated(5, func() { args, err = resp3.ParseRequest(payload, args[:0]) })
	if err != nil || len(args) != 3 || len(args[2]) != len(big) {
		t.Fatalf("16 MiB value: %d args, %v", len(args), err)
	}
	if per > 1024 {
		t.Errorf("decoding a 16 MiB value allocated %d bytes: it was copied", per)
	}

	// Many tiny elements: bounded by the payload (each takes at least 6
	// bytes on the wire and one 24-byte slice header in memory).
	const n = 200_000
	many := resp3.AppendArray(nil, n)
	for range n {
		many = resp3.AppendBulk(many, nil)
	}
	per = allocated(3, func() { args, err = resp3.ParseRequest(many, nil) })
	if err != nil || len(args) != n {
		t.Fatalf("%d empty elements: %d args, %v", n, len(args), err)
	}
	// Measured about 22 bytes allocated per payload byte: 24-byte slice
	// headers per 6-byte element, and append's growth. Linear, so bounded
	// by the broker's packet size; the bound catches anything worse.
	if limit := uint64(len(many)) * 32; per > limit {
		t.Errorf("%d-byte payload of %d elements allocated %d bytes (limit %d)", len(many), n, per, limit)
	}
}

// Through the runtime, keys and values above the server's limits come back
// as the typed quota error and change nothing.
func TestOversizedKeysAndValuesThroughTheRuntime(t *testing.T) {
	srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		o.Limits = server.Limits{MaxKeyBytes: 1024, MaxValueBytes: 32 << 10}
	}))
	c := dial(t, config(t, srv.Addr(), "oversize"))
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), 1025)
	if _, err := c.Set(ctx, key, []byte("v"), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("SET of a 1025-byte key: %v, want ErrQuotaExceeded", err)
	}
	if _, _, err := c.Get(ctx, key); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("GET of a 1025-byte key: %v, want ErrQuotaExceeded", err)
	}
	if err := c.KeyNotify(ctx, key); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("KEYNOTIFY of a 1025-byte key: %v, want ErrQuotaExceeded", err)
	}
	if _, err := c.Set(ctx, []byte("k"), make([]byte, 32<<10+1), runtime.SetOptions{}); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("SET of a value one byte over: %v, want ErrQuotaExceeded", err)
	}
	if n := srv.Engine().Len(); n != 0 {
		t.Fatalf("%d keys stored by refused requests", n)
	}
	if _, err := c.Set(ctx, []byte("k"), make([]byte, 32<<10), runtime.SetOptions{}); err != nil {
		t.Fatalf("SET of a value at the limit: %v", err)
	}
}

// A request larger than the broker's maximum packet size (announced in
// CONNACK) fails its call with ErrTooLarge without being sent, and leaves
// the session clean: the client never has to reconnect for it.
func TestOversizedPacketDoesNotPoisonTheSession(t *testing.T) {
	srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		o.Limits = server.Limits{MaxPacketBytes: 256 << 10}
	}))
	cfg := config(t, srv.Addr(), "oversize-packet")
	c := dial(t, cfg)
	ctx := context.Background()
	start := time.Now()
	_, err := c.Set(ctx, []byte("k"), make([]byte, 1<<20), runtime.SetOptions{})
	took := time.Since(start)
	if !errors.Is(err, runtime.ErrTooLarge) {
		t.Fatalf("a 1 MiB request to a broker taking 256 KiB packets: %v, want ErrTooLarge", err)
	}
	if took > cfg.Timeout+slack {
		t.Fatalf("the oversized call took %v (timeout %v)", took, cfg.Timeout)
	}
	settle(t, []*runtime.Client{c})
	before := c.Stats().Reconnects
	time.Sleep(500 * time.Millisecond)
	if after := c.Stats().Reconnects; after != before {
		t.Fatalf("%d reconnects after the oversized call settled: the session resends it", after-before)
	}
}
