package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server/engine"
)

// seedKeys puts n keys "dev/%04d" (and one key outside the pattern) into
// the server's engine.
func seedKeys(t *testing.T, env *testEnv, n int) []string {
	t.Helper()
	var want []string
	for i := range n {
		k := fmt.Sprintf("dev/%04d", i)
		want = append(want, k)
		if err := env.srv.Engine().Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.srv.Engine().Put([]byte("other"), []byte("v"), engine.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return want
}

func collect(t *testing.T, l *runtime.Listing, ctx context.Context) []string {
	t.Helper()
	var got []string
	for k, err := range l.All(ctx) {
		if err != nil {
			t.Fatalf("after %d keys: %v", len(got), err)
		}
		got = append(got, string(k))
	}
	return got
}

func TestListKeysPagesThroughEveryMatchingKeyOnce(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		want := seedKeys(t, env, 1050)
		c := dial(t, env.url)
		l := c.ListKeys("dev/*", runtime.ListOptions{})
		got := collect(t, l, testCtx(t))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("listed %d keys, want %d (first %q)", len(got), len(want), got[:min(3, len(got))])
		}
		if !l.Done() || l.Cursor() != "" {
			t.Fatalf("Done %v, Cursor %q after the last page", l.Done(), l.Cursor())
		}
		for k, err := range l.All(testCtx(t)) {
			if !errors.Is(err, runtime.ErrInvalidArgument) {
				t.Fatalf("second range: %q, %v", k, err)
			}
		}
	})
}

func TestListKeysResumesFromASavedCursorWithoutSkipping(t *testing.T) {
	env := backends[0].start(t)
	want := seedKeys(t, env, 1300) // pages of 500: the break falls inside the second
	c := dial(t, env.url)
	ctx := testCtx(t)
	seen := map[string]bool{}
	var saved runtime.Cursor
	l := c.ListKeys("dev/*", runtime.ListOptions{})
	for k, err := range l.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seen[string(k)] = true
		saved = l.Cursor()
		if len(seen) == 700 { // "crash" in the middle of a page
			break
		}
	}
	if saved == "" {
		t.Fatal("no cursor after 700 keys")
	}
	for _, k := range collect(t, c.ListKeys("dev/*", runtime.ListOptions{From: saved}), ctx) {
		seen[k] = true
	}
	for _, k := range want {
		if !seen[k] {
			t.Fatalf("%s skipped by the resumed listing", k)
		}
	}
}

func TestListKeysEscapesLiteralParts(t *testing.T) {
	env := backends[0].start(t)
	for _, k := range []string{"a*b/1", "a*b/2", "axb/1", "a[1]/x", "a1/x"} {
		if err := env.srv.Engine().Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := dial(t, env.url)
	for prefix, want := range map[string][]string{"a*b/": {"a*b/1", "a*b/2"}, "a[1]/": {"a[1]/x"}} {
		got := collect(t, c.ListKeys(runtime.GlobEscape(prefix)+"*", runtime.ListOptions{}), testCtx(t))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("prefix %q: %q, want %q", prefix, got, want)
		}
	}
}

func TestListKeysStopsAtContextEnd(t *testing.T) {
	env := backends[0].start(t)
	seedKeys(t, env, 1500) // three pages: the cancel is seen when the second is asked for
	c := dial(t, env.url)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	n := 0
	var last error
	for _, err := range c.ListKeys("dev/*", runtime.ListOptions{}).All(ctx) {
		if err != nil {
			last = err
			continue
		}
		n++
		cancel()
	}
	if !errors.Is(last, context.Canceled) || n == 0 || n >= 1500 {
		t.Fatalf("after cancel: %d keys, error %v", n, last)
	}
}

// scriptedService answers SCAN requests on mosquitto with pages chosen by
// the request's token ("" for the first page), counting requests per token.
// A page of nil gets no answer (the request times out).
func scriptedService(t *testing.T, pages map[string]func(n int) *string) (runtime.Config, map[string]int, *sync.Mutex) {
	t.Helper()
	url := brokertest.Mosquitto(t)
	var mu sync.Mutex
	count := map[string]int{}
	coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		args, err := resp3.ParseRequest(req.Payload, nil)
		if err != nil || string(args[0]) != "SCAN" {
			return nil
		}
		tok := ""
		if len(args) == 3 {
			tok = string(args[2])
		}
		mu.Lock()
		count[tok]++
		n := count[tok]
		mu.Unlock()
		page, ok := pages[tok]
		if !ok {
			return coreReply(req, "-ERR syntax error\r\n", "__stat", "200")
		}
		p := page(n)
		if p == nil {
			return nil
		}
		return coreReply(req, *p, "__stat", "200")
	})
	cfg := testConfig(t, url)
	return cfg, count, &mu
}

func page(keys []string, token string) func(int) *string {
	var b []byte
	n := 1
	if token != "" {
		n = 2
	}
	b = resp3.AppendArray(b, n)
	b = resp3.AppendArray(b, len(keys))
	for _, k := range keys {
		b = resp3.AppendBulkString(b, k)
	}
	if token != "" {
		b = resp3.AppendBulkString(b, token)
	}
	s := string(b)
	return func(int) *string { return &s }
}

func TestListKeysAgainstAScriptedService(t *testing.T) {
	t.Run("empty page with token, repeated key, last page", func(t *testing.T) {
		cfg, _, _ := scriptedService(t, map[string]func(int) *string{
			"":   page([]string{"a", "b"}, "t1"),
			"t1": page(nil, "t2"),
			"t2": page([]string{"b", "c"}, ""),
		})
		got := collect(t, dialConfig(t, cfg).ListKeys("*", runtime.ListOptions{}), testCtx(t))
		if !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("keys out of order, repeated across pages", func(t *testing.T) {
		cfg, _, _ := scriptedService(t, map[string]func(int) *string{
			"":   page([]string{"c", "a"}, "t1"),
			"t1": page([]string{"b", "a", "c", "d"}, ""),
		})
		got := collect(t, dialConfig(t, cfg).ListKeys("*", runtime.ListOptions{}), testCtx(t))
		if !slices.Equal(got, []string{"c", "a", "b", "d"}) {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("a token given twice ends the listing", func(t *testing.T) {
		cfg, _, _ := scriptedService(t, map[string]func(int) *string{
			"":   page([]string{"a"}, "t1"),
			"t1": page([]string{"b"}, "t2"),
			"t2": page([]string{"c"}, "t1"),
		})
		var got []string
		var last error
		for k, err := range dialConfig(t, cfg).ListKeys("*", runtime.ListOptions{}).All(testCtx(t)) {
			if err != nil {
				last = err
				break
			}
			got = append(got, string(k))
		}
		var pe *runtime.ProtocolError
		if !errors.As(last, &pe) || !strings.Contains(pe.Reason, "repeated") {
			t.Fatalf("keys %q, error %v; want a ProtocolError about the repeated token", got, last)
		}
	})
	t.Run("a failed page is retried from the same cursor", func(t *testing.T) {
		first := page([]string{"b"}, "")
		cfg, count, mu := scriptedService(t, map[string]func(int) *string{
			"": page([]string{"a"}, "t1"),
			"t1": func(n int) *string {
				if n == 1 {
					return nil // lost: the client times out and asks again
				}
				return first(n)
			},
		})
		cfg.Timeout = 300 * time.Millisecond
		got := collect(t, dialConfig(t, cfg).ListKeys("*", runtime.ListOptions{}), testCtx(t))
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, []string{"a", "b"}) || count["t1"] != 2 {
			t.Fatalf("got %q after %d requests for t1", got, count["t1"])
		}
	})
}

func TestParseScanPageAcceptsExactlyTheDocumentedShape(t *testing.T) {
	for _, tc := range []struct {
		payload string
		keys    []string
		next    runtime.Cursor
		ok      bool
	}{
		{"*1\r\n*0\r\n", nil, "", true},
		{"*1\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", []string{"a", "b"}, "", true},
		{"*2\r\n*1\r\n$1\r\na\r\n$2\r\n61\r\n", []string{"a"}, "61", true},
		{"*2\r\n*0\r\n$2\r\n61\r\n", nil, "61", true},
		{"*0\r\n", nil, "", false},
		{"*3\r\n*0\r\n$1\r\nx\r\n$1\r\ny\r\n", nil, "", false},
		{"*2\r\n*0\r\n$0\r\n\r\n", nil, "", false},
		{"*2\r\n*0\r\n:1\r\n", nil, "", false},
		{"*1\r\n*1\r\n:1\r\n", nil, "", false},
		{"*1\r\n$1\r\na\r\n", nil, "", false},
		{"*1\r\n*0\r\n+OK\r\n", nil, "", false},
		{"$1\r\na\r\n", nil, "", false},
		{"*1\r\n*00\r\n", nil, "", false},
	} {
		keys, next, err := runtime.ParseScanPage([]byte(tc.payload))
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.payload, err, tc.ok)
			continue
		}
		var got []string
		for _, k := range keys {
			got = append(got, string(k))
		}
		if tc.ok && (!slices.Equal(got, tc.keys) || next != tc.next) {
			t.Errorf("%q: %q %q, want %q %q", tc.payload, got, next, tc.keys, tc.next)
		}
	}
}

func FuzzScanPage(f *testing.F) {
	for _, s := range []string{"*1\r\n*0\r\n", "*2\r\n*1\r\n$1\r\na\r\n$2\r\n61\r\n", "*2\r\n*0\r\n$0\r\n\r\n", "*1\r\n*2147483647\r\n", "*1\r\n*00\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		keys, next, err := runtime.ParseScanPage(payload)
		if err != nil {
			var pe *runtime.ProtocolError
			if !errors.As(err, &pe) && !errors.Is(err, resp3.ErrSyntax) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// What parsed re-encodes to the same bytes: nothing was ignored.
		n := 1
		if next != "" {
			n = 2
		}
		b := resp3.AppendArray(nil, n)
		b = resp3.AppendArray(b, len(keys))
		for _, k := range keys {
			b = resp3.AppendBulkString(b, string(k))
		}
		if next != "" {
			b = resp3.AppendBulkString(b, string(next))
		}
		if string(b) != string(payload) {
			t.Fatalf("%q parsed as %q %q", payload, keys, next)
		}
	})
}

func TestScanPageWalksThePagesOneRequestEach(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		want := seedKeys(t, env, 1050)
		c := dial(t, env.url)
		ctx := testCtx(t)
		var got []string
		pages := 0
		for from := runtime.Cursor(""); ; pages++ {
			keys, next, err := c.ScanPage(ctx, "dev/*", from)
			if err != nil {
				t.Fatalf("page %d: %v", pages, err)
			}
			for _, k := range keys {
				got = append(got, string(k))
			}
			if next == "" {
				break
			}
			from = next
		}
		if !slices.Equal(got, want) || pages < 2 {
			t.Fatalf("%d pages listed %d keys, want %d over more than one page", pages+1, len(got), len(want))
		}
		if _, _, err := c.ScanPage(ctx, "", ""); !errors.Is(err, runtime.ErrInvalidArgument) {
			t.Fatalf("empty pattern: %v, want ErrInvalidArgument", err)
		}
	})
}
