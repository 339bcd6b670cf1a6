package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func TestBackoffGrowsWithTheStreakAndStaysCapped(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		b := backoff{min: 100 * time.Millisecond, max: 2 * time.Second, rand: func() float64 { return r }}
		if d := b.delay(0); d < 0 || d >= b.min {
			t.Errorf("r=%v: delay(0) = %v, want [0, min)", r, d)
		}
		prevLow := time.Duration(0)
		for n := 1; n <= 12; n++ {
			d := b.delay(n)
			step := min(b.min<<(n-1), b.max)
			if d < step/2 || d > step {
				t.Errorf("r=%v: delay(%d) = %v, want in [%v, %v]", r, n, d, step/2, step)
			}
			if step/2 < prevLow {
				t.Errorf("lower bound shrank at %d", n)
			}
			prevLow = step / 2
		}
		if d := b.delay(1000); d > b.max {
			t.Errorf("delay(1000) = %v beyond the cap", d)
		}
	}
}

func TestSemaphoreIsFIFOAndFollowsItsLimit(t *testing.T) {
	s := newSemaphore(2)
	ctx := context.Background()
	for range 2 {
		if err := s.acquire(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	order := make(chan int, 3)
	for i := range 3 {
		go func() {
			if err := s.acquire(ctx, nil); err == nil {
				order <- i
			}
		}()
		for {
			s.mu.Lock()
			n := len(s.waiters)
			s.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	s.release()
	if got := <-order; got != 0 {
		t.Fatalf("first granted waiter %d, want 0", got)
	}
	s.setLimit(4) // grows: both remaining waiters get in
	if a, b := <-order, <-order; a+b != 3 {
		t.Fatalf("order %d %d", a, b)
	}
	if s.inUse() != 4 {
		t.Fatalf("in use %d", s.inUse())
	}
	s.setLimit(1) // shrinks: nobody new until enough leave
	for range 3 {
		s.release()
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := s.acquire(cctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire over a shrunk limit: %v", err)
	}
	abort := make(chan struct{})
	close(abort)
	if err := s.acquire(ctx, abort); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after abort: %v", err)
	}
	s.release()
	if err := s.acquire(ctx, nil); err != nil || s.inUse() != 1 {
		t.Fatalf("slot not handed back: %v, in use %d", err, s.inUse())
	}
}

func TestServiceErrorsMatchTheirSentinels(t *testing.T) {
	texts := map[string]error{
		"the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized":               ErrTimestampSkew,
		"a fencing token is required for this request":                                                                                   ErrFencingTokenRequired,
		"the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized": ErrFencingTokenSkew,
		"the request fencing token is a lower version than the fencing token protecting the resource":                                    ErrFencingTokenLowerVersion,
		"the quota has been exceeded": ErrQuotaExceeded,
		"syntax error":                ErrSyntax,
		"not authorized":              ErrNotAuthorized,
		"unknown command":             ErrUnknownCommand,
		"wrong number of arguments":   ErrWrongNumberOfArguments,
		"missing timestamp":           ErrMissingTimestamp,
		"malformed timestamp":         ErrMalformedTimestamp,
		"the key length is zero":      ErrKeyLengthZero,
	}
	for text, sentinel := range texts {
		if sentinel.Error() != text {
			t.Errorf("sentinel text %q, want %q", sentinel.Error(), text)
		}
		err := fmt.Errorf("wrapped: %w", &ServiceError{Text: text})
		if !errors.Is(err, sentinel) {
			t.Errorf("%q does not match its sentinel", text)
		}
		for _, other := range texts {
			if other != sentinel && errors.Is(err, other) {
				t.Errorf("%q also matches %v", text, other)
			}
		}
	}
	unknown := &ServiceError{Text: "brand new"}
	for _, s := range texts {
		if errors.Is(unknown, s) {
			t.Errorf("unknown text matches %v", s)
		}
	}
	if unknown.Error() != "statestore: brand new" {
		t.Errorf("Error() = %q", unknown.Error())
	}
}

func TestTransportErrorsAreRetryableAndServiceAnswersAreNot(t *testing.T) {
	retryable := []error{
		&connLostError{op: "GET"},
		&TimeoutError{Op: "GET", Connected: true},
		fmt.Errorf("x: %w", &TimeoutError{Op: "SET"}),
	}
	for _, err := range retryable {
		if !IsRetryable(err) {
			t.Errorf("%v is not retryable", err)
		}
	}
	if !errors.Is(&TimeoutError{}, context.DeadlineExceeded) {
		t.Error("TimeoutError does not match context.DeadlineExceeded")
	}
	for _, err := range []error{ErrNotFound, ErrConditionNotMet, &ServiceError{Text: "syntax error"}, &RPCError{Status: 400}, ErrClosed} {
		if IsRetryable(err) {
			t.Errorf("%v is retryable", err)
		}
	}
	if !errors.Is(&BrokerError{Packet: "PUBACK", ReasonCode: 0x87}, ErrNotAuthorized) {
		t.Error("a PUBACK 0x87 does not match ErrNotAuthorized")
	}
}

func TestTopics(t *testing.T) {
	const svc = "FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8"
	cases := []struct{ id, resp string }{
		{"client-id1", "clients/client-id1/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"a/b", "clients/612F62/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"w+", "clients/772B/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"\xff", "clients/FF/services/statestore/v1/" + svc + "/command/invoke/response"},
	}
	for _, tc := range cases {
		if got := ResponseTopic(tc.id); got != tc.resp {
			t.Errorf("ResponseTopic(%q) = %q, want %q", tc.id, got, tc.resp)
		}
	}
	if got, want := NotifyTopic("client-id1", []byte("SOMEKEY")), "clients/statestore/v1/"+svc+"/636C69656E742D696431/command/notify/534F4D454B4559"; got != want {
		t.Errorf("NotifyTopic = %q, want %q", got, want)
	}
	if k, ok := decodeHex("534f4d454B4559"); !ok || string(k) != "SOMEKEY" {
		t.Errorf("decodeHex mixed case = %q, %v", k, ok)
	}
	if nodeID("a:b") == "a:b" || nodeID("ab") != "ab" {
		t.Error("nodeID must hex-encode ids holding ':' only")
	}
}

func TestPublishSizeIsTheEncodedSize(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "size-client"}, respTopic: ResponseTopic("size-client")}
	for _, n := range []int{0, 1, 100, 127, 128, 16000, 16384, 70000, 2100000} {
		for _, o := range []reqOpts{{}, {fencing: hlc.HLC{Wall: 1, Node: "n"}, persist: true}} {
			cl := c.getCall()
			cl.payload = make([]byte, n)
			pub := c.envelope(cl, hlc.HLC{Wall: 12345, Node: "size-client"}, o, time.Now().Add(time.Second))
			pub.PacketID = 1
			var buf bytes.Buffer
			if _, err := pub.Packet().WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if got := publishSize(pub); got != buf.Len() {
				t.Errorf("payload %d, opts %+v: publishSize = %d, encoded %d", n, o, got, buf.Len())
			}
		}
	}
}

// A pooled call comes back empty, and a response delivered after its
// request stopped waiting does not reach the next request.
func TestCallsAreReusedClean(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "pool-client"}, respTopic: ResponseTopic("pool-client")}
	cl := c.getCall()
	cl.id = newCorrelationID()
	c.pending.add(cl.id, cl.resp)
	cl.payload = append(cl.payload, "GET k"...)
	c.envelope(cl, hlc.HLC{Wall: 1, Node: "pool-client"}, reqOpts{persist: true}, time.Now().Add(time.Second))
	if !c.pending.deliver(cl.id[:], &paho.Publish{}) {
		t.Fatal("deliver found nobody waiting")
	}
	c.pending.remove(cl.id)
	c.putCall(cl)
	if c.pending.deliver(cl.id[:], &paho.Publish{}) {
		t.Fatal("deliver reached a removed request")
	}
	// sync.Pool may hand back the same call or a new one; either must be clean.
	next := c.getCall()
	if len(next.payload) != 0 || next.pub.Properties != nil || next.user[0].Key != "" || len(next.resp) != 0 {
		t.Fatalf("reused call not clean: payload %q, user %v, %d responses queued", next.payload, next.user, len(next.resp))
	}
	if c.pending.len() != 0 {
		t.Fatalf("%d requests still registered", c.pending.len())
	}
}
